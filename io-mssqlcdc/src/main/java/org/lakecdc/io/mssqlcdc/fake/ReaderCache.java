package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.time.CommitTimeConverter;

/**
 * What {@link FileBackedCdcClient}s of one JVM have parsed of a fake's files, so that a call reads
 * only what changed since the last: the catalog, {@code server.json}, {@code cdc.lsn_time_mapping},
 * {@code cdc.ddl_history} (each parsed again whole when one of its files has a new {@link
 * FileStamp}) and the change tables ({@link ChangeTableIndex}, extended by what was appended).
 *
 * <p>Every call compares the files' stamps first, so a change a writer (another process included)
 * committed before the call is seen by it, as when every call read the files afresh. Values are
 * immutable once cached and shared by threads; a failed parse caches nothing. At most {@value
 * #MAX_SLOTS} files are held; beyond that the cache starts over.
 */
final class ReaderCache {
  static final int MAX_SLOTS = 256;

  private static final Map<String, Slot> SLOTS = new ConcurrentHashMap<>();

  private ReaderCache() {}

  /** One cached file (or file set): the stamps it was parsed at and what was parsed. */
  private static final class Slot {
    FileStamp[] stamps;
    Object value;
    ChangeTableIndex index;
  }

  private static Slot slot(String key) {
    if (SLOTS.size() >= MAX_SLOTS && !SLOTS.containsKey(key)) {
      SLOTS.clear();
    }
    return SLOTS.computeIfAbsent(key, k -> new Slot());
  }

  private static String key(String kind, Path path) {
    return kind + ":" + path.toAbsolutePath().normalize();
  }

  /**
   * The value parsed from {@code files}, parsed again by {@code load} when any file's stamp
   * changed. The stamps are read before loading, so a file written during the load is loaded again
   * by the next call.
   */
  @SuppressWarnings("unchecked")
  private static <T> T whole(String key, List<Path> files, Supplier<T> load) {
    Slot slot = slot(key);
    synchronized (slot) {
      FileStamp[] now = new FileStamp[files.size()];
      for (int i = 0; i < now.length; i++) {
        now[i] = FileStamp.of(files.get(i));
      }
      if (slot.value != null && Arrays.equals(now, slot.stamps)) {
        return (T) slot.value;
      }
      T value = load.get();
      slot.stamps = now;
      slot.value = value;
      return value;
    }
  }

  /** {@link #whole} of the one file {@code name} of {@code directory}, loaded by {@code load}. */
  private static <T> T wholeFile(String kind, Path directory, String name, Function<Path, T> load) {
    Path file = directory.resolve(name);
    return whole(key(kind, directory), List.of(file), () -> load.apply(file));
  }

  // ---- metadata ---------------------------------------------------------------------------------

  /** The catalog ({@link Catalog#load}); callers must not change it. */
  static Catalog catalog(Path directory) {
    List<Path> files =
        List.of(
            directory.resolve(FakeFormat.SERVER),
            directory.resolve(FakeFormat.SYS_TABLES),
            directory.resolve(FakeFormat.SYS_COLUMNS),
            directory.resolve(FakeFormat.CHANGE_TABLES),
            directory.resolve(FakeFormat.CAPTURED_COLUMNS),
            directory.resolve(FakeFormat.INDEX_COLUMNS));
    return whole(key("catalog", directory), files, () -> Catalog.load(directory));
  }

  /** {@code server.json} as parsed, with the stamp it was parsed at. */
  record ServerFile(Catalog.Server server, FileStamp stamp) {}

  /** {@code server.json}: zone, clock and its modification time. */
  static ServerFile server(Path directory) {
    return wholeFile(
        "server",
        directory,
        FakeFormat.SERVER,
        file -> {
          FileStamp stamp = FileStamp.of(file);
          return new ServerFile(Catalog.server(directory), stamp);
        });
  }

  /** {@code cdc.ddl_history}, in file order. */
  static List<Catalog.DdlRow> ddlRows(Path directory) {
    return wholeFile(
        "ddl",
        directory,
        FakeFormat.DDL_HISTORY,
        file -> Collections.unmodifiableList(parseLines(file, Catalog::ddlRow)));
  }

  /**
   * Every row of a JSON-lines file, in file order, each parsed by {@code parse} from its JSON
   * object and its place ({@code file:line}, for messages); empty for an absent file.
   */
  private static <R> List<R> parseLines(Path file, BiFunction<JsonNode, String, R> parse) {
    List<R> rows = new ArrayList<>();
    try (FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file)) {
      for (JsonNode n = lines.next(); n != null; n = lines.next()) {
        rows.add(parse.apply(n, lines.where()));
      }
    }
    return rows;
  }

  // ---- lsn_time_mapping
  // ---------------------------------------------------------------------------

  /** {@code cdc.lsn_time_mapping}, parsed once per version of the file. */
  static Mapping mapping(Path directory) {
    return wholeFile(
        "mapping",
        directory,
        FakeFormat.LSN_TIME_MAPPING,
        file -> {
          List<Catalog.MappingRow> rows = parseLines(file, Catalog::mappingRow);
          rows.sort(Comparator.comparing(Catalog.MappingRow::startLsn));
          return new Mapping(Collections.unmodifiableList(rows));
        });
  }

  /** The clock of the server's zone: UTC as such, any other zone by name. */
  static CommitTimeConverter converter(ZoneId zone) {
    return zone.normalized().equals(ZoneOffset.UTC)
        ? CommitTimeConverter.utc()
        : CommitTimeConverter.named(zone);
  }

  /** One version of {@code cdc.lsn_time_mapping}: its rows by start LSN (stable for ties). */
  static final class Mapping {
    final List<Catalog.MappingRow> rows;
    private volatile Timeline timeline;

    Mapping(List<Catalog.MappingRow> rows) {
      this.rows = rows;
    }

    /** The last start LSN, or null when the mapping is empty. */
    Lsn maxLsn() {
      return rows.isEmpty() ? null : rows.get(rows.size() - 1).startLsn();
    }

    /** The mapping converted to UTC on the clock of {@code zone}, computed once per zone. */
    Timeline timeline(ZoneId zone) {
      Timeline t = timeline;
      if (t == null || !t.zone.equals(zone)) {
        t = new Timeline(zone, rows);
        timeline = t;
      }
      return t;
    }
  }

  /**
   * The mapping in LSN order converted to UTC as one sequence (the fall-back rule needs it), with
   * the commit time of each start LSN (the last row's, for a start LSN listed twice).
   */
  static final class Timeline {
    final ZoneId zone;
    final List<Commit> commits;
    final Map<Lsn, Instant> times;
    private final Lsn[] lsns;

    Timeline(ZoneId zone, List<Catalog.MappingRow> rows) {
      this.zone = zone;
      List<LocalDateTime> local = new ArrayList<>(rows.size());
      for (Catalog.MappingRow row : rows) {
        local.add(row.tranEndTime());
      }
      List<Instant> utc = converter(zone).toUtc(local);
      List<Commit> out = new ArrayList<>(rows.size());
      Map<Lsn, Instant> byLsn = new HashMap<>();
      lsns = new Lsn[rows.size()];
      for (int i = 0; i < rows.size(); i++) {
        Commit c = new Commit(rows.get(i).startLsn(), utc.get(i));
        out.add(c);
        byLsn.put(c.lsn(), c.commitTime());
        lsns[i] = c.lsn();
      }
      this.commits = Collections.unmodifiableList(out);
      this.times = Collections.unmodifiableMap(byLsn);
    }

    /** The last start LSN, or null when empty. */
    Lsn maxLsn() {
      return lsns.length == 0 ? null : lsns[lsns.length - 1];
    }

    /** The index of the first commit whose LSN is after {@code lsn}; the size when none. */
    int firstAfter(Lsn lsn) {
      return ChangeTableIndex.firstAfter(lsns, lsns.length, lsn);
    }

    /** The index of the first commit whose LSN is at or after {@code lsn}; the size when none. */
    int firstAtOrAfter(Lsn lsn) {
      return ChangeTableIndex.firstAtOrAfter(lsns, lsns.length, lsn);
    }
  }

  // ---- change tables ----------------------------------------------------------------------------

  /**
   * A change table version opened for reading with its index: {@code channel} is the version that
   * {@code index} describes, or, when the file changed under every attempt to open it, any version
   * with {@code index} null (read it from the start). {@code channel} is null for an absent file.
   */
  record Opened(ChangeTableIndex index, FileChannel channel) implements AutoCloseable {
    @Override
    public void close() {
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException e) {
          throw new UncheckedIOException("Cannot close a change table", e);
        }
      }
    }
  }

  /**
   * Opens the current version of a change table and brings its index up to that version. The caller
   * closes the channel (or hands it to a reader that does).
   *
   * @throws UncheckedIOException when the file cannot be read
   */
  static Opened changeTable(Path file) {
    return openChangeTable(
        file, (slot, before, channel) -> new Opened(indexed(slot, file, before, channel), channel));
  }

  /**
   * Opens the current version of a change table for a read from {@code fromLsn}, indexing it only
   * when the read needs the index to find where to start:
   *
   * <ul>
   *   <li>the cached index of this version, when there is one;
   *   <li>else the cached index of an earlier version this one only appended to, unextended, when
   *       {@code fromLsn} lies after every commit it holds (the read starts at its last row and
   *       reads the appended part itself, so nothing is parsed twice);
   *   <li>else no index (null) when the file's first row is at or after {@code fromLsn}: the read
   *       starts at the first line, as a read from the start does;
   *   <li>else the index brought up to this version ({@link #changeTable}).
   * </ul>
   *
   * The caller closes the channel (or hands it to a reader that does).
   *
   * @throws UncheckedIOException when the file cannot be read
   */
  static Opened changeTableFrom(Path file, Lsn fromLsn) {
    return openChangeTable(
        file,
        (slot, before, channel) -> {
          ChangeTableIndex index = slot.index;
          if (index != null && index.stamp.equals(before)) {
            return new Opened(index, channel);
          }
          if (index != null && index.startsBefore(fromLsn) && index.prefixOf(before, channel)) {
            return new Opened(index, channel);
          }
          if (index == null) {
            Lsn first = ChangeTableIndex.firstStartLsn(channel, before.size());
            if (first != null && !first.isBefore(fromLsn)) {
              return new Opened(null, channel);
            }
          }
          return new Opened(indexed(slot, file, before, channel), channel);
        });
  }

  /** What to open a stable version of a change table with, chosen under its slot's lock. */
  @FunctionalInterface
  private interface IndexChoice {
    Opened choose(Slot slot, FileStamp before, FileChannel channel) throws IOException;
  }

  /**
   * Opens a version of a change table that did not change while it was opened ({@link
   * SourceTableIndex#openVersion}) and lets {@code choice} pick its index under the slot's lock;
   * after every try saw the file change, any version without an index.
   *
   * @throws UncheckedIOException when the file cannot be read
   */
  private static Opened openChangeTable(Path file, IndexChoice choice) {
    // The same stamped open as a source table's read: a channel on the version stamped before it.
    SourceTableIndex.Version version = SourceTableIndex.openVersion(file);
    if (version.stamp() == null) {
      return new Opened(null, version.channel());
    }
    if (version.channel() == null) {
      return new Opened(ChangeTableIndex.absent(), null);
    }
    FileChannel channel = version.channel();
    Slot slot = slot(key("changes", file));
    try {
      synchronized (slot) {
        return choice.choose(slot, version.stamp(), channel);
      }
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      if (e instanceof IOException io) {
        throw new UncheckedIOException("Cannot read " + file + ": " + io.getMessage(), io);
      }
      throw (RuntimeException) e;
    }
  }

  /**
   * The slot's index when it describes the version stamped {@code before}, else the slot's index
   * brought up to that version (and kept in the slot). The caller holds the slot's lock.
   */
  private static ChangeTableIndex indexed(
      Slot slot, Path file, FileStamp before, FileChannel channel) throws IOException {
    ChangeTableIndex index = slot.index;
    if (index == null || !index.stamp.equals(before)) {
      index = ChangeTableIndex.index(index, file, before, channel);
      slot.index = index;
    }
    return index;
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Closing a read-only channel loses nothing.
    }
  }
}
