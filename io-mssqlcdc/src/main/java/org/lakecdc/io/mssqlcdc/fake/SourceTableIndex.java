package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import org.apache.beam.sdk.util.Sleeper;

/**
 * A sparse index of one source table file ({@code <schema>.<table>.jsonl}) by its key, so that a
 * read of a key range (a chunk of a chunked snapshot, a key range of a whole one) starts near its
 * lower bound instead of parsing every line before it. Immutable; one per file version and key (the
 * newest kept in a JVM-wide cache of at most {@value #MAX_SLOTS} files).
 *
 * <p>Every {@value #EVERY}th row's key tuple, the byte offset of its line and the number of lines
 * before it, taken while the file is read from its first line as {@code readTable} reads it: by a
 * read of every line over the key (a chunked snapshot's planning, a whole read: {@link Recorder}),
 * which parses each line anyway, or else by a pass of its own ({@link #build}) before the first
 * range read of the file's version. Offsets are counted from the lines read (each line's UTF-8
 * bytes and one for its end) and kept only when they add up to the file's size. A version with a
 * line the reader refuses, or whose lines are not ended by one byte each, gets an index without
 * entries: reads of it start at the first line, so such a line fails every read that reaches it,
 * naming the same line as before.
 *
 * <p>SQL Server seeks the clustered index for such a range; this is the simulator's equivalent.
 */
final class SourceTableIndex {
  /** Rows between two entries. */
  static final int EVERY = 256;

  /** Files indexed at once in a JVM; beyond that the cache starts over. */
  static final int MAX_SLOTS = 64;

  /** Attempts to open a version of the file that does not change while it is opened. */
  private static final int OPEN_ATTEMPTS = 5;

  private static final Map<String, Slot> SLOTS = new ConcurrentHashMap<>();

  /** The lines parsed by {@link #build} passes in this JVM (for tests: a read that seeks). */
  private static final LongAdder LINES_BUILT = new LongAdder();

  /** The stamp of the file version indexed. */
  final FileStamp stamp;

  private final KeyTuple[] keys;
  private final long[] offsets;
  private final int[] linesBefore;
  private final int entries;

  /**
   * Whether every line of the version was taken (false: an index without entries that stands for
   * none).
   */
  private final boolean complete;

  /** The version's rows (lines), when {@link #complete}. */
  private final long rows;

  /** The key of the version's last row, when {@link #complete} and it has rows. */
  private final KeyTuple lastKey;

  /** One cached file and key: the newest index built. */
  private static final class Slot {
    SourceTableIndex index;
  }

  /**
   * A version of a source table file opened for a read from a lower bound: read it with {@link
   * FakeFormat.JsonLines#open(Path, FileChannel, long, int)} from {@code offset}, {@code
   * linesBefore} lines already passed. {@code channel} is null for an absent file.
   *
   * @param channel the version, open; the reader closes it
   * @param offset where the read starts, in bytes, at the start of a line
   * @param linesBefore the lines of the file before {@code offset}
   */
  record Seek(FileChannel channel, long offset, int linesBefore) {}

  private SourceTableIndex(
      FileStamp stamp,
      KeyTuple[] keys,
      long[] offsets,
      int[] linesBefore,
      int entries,
      boolean complete,
      long rows,
      KeyTuple lastKey) {
    this.stamp = stamp;
    this.keys = keys;
    this.offsets = offsets;
    this.linesBefore = linesBefore;
    this.entries = entries;
    this.complete = complete;
    this.rows = rows;
    this.lastKey = lastKey;
  }

  /**
   * Whether the index took every line of its version (each a row in key order): then {@link #rows},
   * {@link #firstKey} and {@link #lastKey} answer for the whole version.
   */
  boolean complete() {
    return complete;
  }

  /** The version's rows; meaningful when {@link #complete}. */
  long rows() {
    return rows;
  }

  /** The key of the version's first row, or null when it has none (or is not {@link #complete}). */
  KeyTuple firstKey() {
    return complete && entries > 0 ? keys[0] : null;
  }

  /** The key of the version's last row, or null when it has none (or is not {@link #complete}). */
  KeyTuple lastKey() {
    return complete ? lastKey : null;
  }

  /**
   * The number of rows whose key is below {@code bound}, read from the entry before it: at most
   * {@value #EVERY} lines are parsed, with {@code key} as the reader parses them. Needs a {@link
   * #complete} index of the version open in {@code channel}.
   *
   * @throws IOException when the file cannot be read
   */
  long rowsBelow(
      Path file, FileChannel channel, KeyTuple bound, BiFunction<JsonNode, String, KeyTuple> key)
      throws IOException {
    long[] at = seekBefore(bound);
    if (at[1] >= rows) {
      return rows;
    }
    // Not closed: that would close the caller's channel.
    FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file, channel, at[0], (int) at[1]);
    long below = at[1];
    for (JsonNode n = lines.next(); n != null; n = lines.next()) {
      if (key.apply(n, lines.where()).compareTo(bound) >= 0) {
        break;
      }
      below++;
    }
    return below;
  }

  /**
   * The key of the row at {@code row} (0-based, in key order), read from the entry at or before it:
   * at most {@value #EVERY} lines are parsed, with {@code key} as the reader parses them; null when
   * the version has no such row. Needs a {@link #complete} index of the version open in {@code
   * channel}.
   *
   * @throws IOException when the file cannot be read
   */
  KeyTuple keyAt(
      Path file, FileChannel channel, long row, BiFunction<JsonNode, String, KeyTuple> key)
      throws IOException {
    if (row < 0 || row >= rows) {
      return null;
    }
    int lo = 0;
    int hi = entries;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (linesBefore[mid] <= row) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    long offset = lo == 0 ? 0 : offsets[lo - 1];
    long line = lo == 0 ? 0 : linesBefore[lo - 1];
    // Not closed: that would close the caller's channel.
    FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file, channel, offset, (int) line);
    for (JsonNode n = lines.next(); n != null; n = lines.next(), line++) {
      if (line == row) {
        return key.apply(n, lines.where());
      }
    }
    return null;
  }

  /**
   * The {@link #complete} index of the current version of {@code file} under {@code keyColumns}:
   * the cached one, or else the writer's {@link Sidecar} of that version (then cached); null when
   * neither is there (nothing cached, or the cached index of another version or not complete, and
   * no current sidecar).
   *
   * @param key the reader's key of a parsed line (or of a sidecar's key), as for {@link #open}
   */
  static SourceTableIndex current(
      Path file, List<Catalog.Column> keyColumns, BiFunction<JsonNode, String, KeyTuple> key) {
    FileStamp stamp = FileStamp.of(file);
    SourceTableIndex index = cached(file, keyColumns);
    if (index != null && index.complete && index.stamp.equals(stamp)) {
      return index;
    }
    if (stamp.absent()) {
      return null;
    }
    SourceTableIndex loaded = Sidecar.load(file, stamp, keyColumns, key);
    if (loaded != null) {
      Slot slot = slot(slotKey(file, keyColumns));
      synchronized (slot) {
        slot.index = loaded;
      }
    }
    return loaded;
  }

  /** The number of entries (rows indexed, one in {@value #EVERY}). */
  int entries() {
    return entries;
  }

  /**
   * Where a read of the rows at or after {@code lower} starts: the last entry whose key is before
   * {@code lower}, or the file's start when none is.
   *
   * @return {offset in bytes, lines before it}
   */
  long[] seekBefore(KeyTuple lower) {
    int lo = 0;
    int hi = entries;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (keys[mid].compareTo(lower) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == 0 ? new long[] {0, 0} : new long[] {offsets[lo - 1], linesBefore[lo - 1]};
  }

  /**
   * Opens the current version of {@code file} for a read of the keys at or after {@code lower},
   * indexing that version under {@code keyColumns} first when no index of it is cached.
   *
   * @param file the source table file
   * @param keyColumns the table's key columns, in key order (they name the cache slot)
   * @param key the reader's key of a row: the key tuple of a parsed line, given the line's {@code
   *     <file>:<line>}; raises a {@link RuntimeException} for a value the reader refuses
   * @param lower the read's lower bound (inclusive)
   * @return where to read from; the file's start (unindexed) when it changed under every attempt to
   *     open it
   * @throws UncheckedIOException when the file cannot be read
   */
  static Seek open(
      Path file,
      List<Catalog.Column> keyColumns,
      BiFunction<JsonNode, String, KeyTuple> key,
      KeyTuple lower) {
    Version version = openVersion(file);
    if (version.stamp() == null || version.channel() == null) {
      return new Seek(version.channel(), 0, 0);
    }
    FileChannel channel = version.channel();
    Slot slot = slot(slotKey(file, keyColumns));
    try {
      SourceTableIndex index;
      synchronized (slot) {
        index = slot.index;
        if (index == null || !index.stamp.equals(version.stamp())) {
          index = Sidecar.load(file, version.stamp(), keyColumns, key);
          if (index == null) {
            index = build(file, version.stamp(), channel, keyColumns, key);
          }
          slot.index = index;
        }
      }
      long[] at = index.seekBefore(lower);
      return new Seek(channel, at[0], (int) at[1]);
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      if (e instanceof IOException io) {
        throw new UncheckedIOException("Cannot read " + file + ": " + io.getMessage(), io);
      }
      throw (RuntimeException) e;
    }
  }

  /**
   * A version of a source table file, open: {@code stamp} is the version's when the file did not
   * change while it was opened, null when it changed under every attempt (any version is then
   * open); {@code channel} is null for an absent file.
   *
   * @param channel the version, open; the caller closes it (or hands it to a reader that does)
   * @param stamp the version's stamp, or null
   */
  record Version(FileChannel channel, FileStamp stamp) {}

  /**
   * Opens the current version of {@code file}, stamped when it did not change while being opened.
   *
   * @throws UncheckedIOException when the file cannot be opened
   */
  static Version openVersion(Path file) {
    for (int attempt = 1; attempt <= OPEN_ATTEMPTS; attempt++) {
      FileStamp before = FileStamp.of(file);
      if (before.absent()) {
        return new Version(null, before);
      }
      FileChannel channel = ChangeTableIndex.open(file);
      if (channel == null) {
        continue;
      }
      // The writer replaces files whole, so an unchanged stamp after the open shows that the
      // channel holds the version stamped before it.
      if (!FileStamp.of(file).equals(before)) {
        closeQuietly(channel);
        continue;
      }
      return new Version(channel, before);
    }
    return new Version(ChangeTableIndex.open(file), null);
  }

  /**
   * What a read of the whole file from its first line, over its key, records of the index as it
   * goes ({@code readTable} without bounds: a chunked snapshot's planning, a whole read): the index
   * is kept when the read reaches the file's end, every line taken, so that the range reads after
   * it seek without parsing the file again.
   *
   * @param file the source table file
   * @param keyColumns the table's key columns, in key order
   * @param stamp the stamp of the version the read opened ({@link #openVersion}), or null
   * @return the recorder, or null when there is nothing to record: an unstamped or absent version,
   *     or one whose index is cached already
   */
  static Recorder recorder(Path file, List<Catalog.Column> keyColumns, FileStamp stamp) {
    if (stamp == null || stamp.absent()) {
      return null;
    }
    Slot slot = slot(slotKey(file, keyColumns));
    synchronized (slot) {
      if (slot.index != null && slot.index.stamp.equals(stamp)) {
        return null;
      }
    }
    return new Recorder(slot, stamp);
  }

  /** Records the index of one version while a reader reads every line of it in order. */
  static final class Recorder {
    private final Slot slot;
    private final FileStamp stamp;
    private final List<KeyTuple> keys = new ArrayList<>();
    private long[] offsets = new long[16];
    private int[] linesBefore = new int[16];
    private long rows;
    private KeyTuple last;

    private Recorder(Slot slot, FileStamp stamp) {
      this.slot = slot;
      this.stamp = stamp;
    }

    /**
     * One row, after the previous one in key order.
     *
     * @param key its key
     * @param offset the byte offset of its line
     * @param lines the lines before it
     */
    void row(KeyTuple key, long offset, int lines) {
      if (rows % EVERY == 0) {
        int i = keys.size();
        if (i == offsets.length) {
          offsets = Arrays.copyOf(offsets, i * 2);
          linesBefore = Arrays.copyOf(linesBefore, i * 2);
        }
        keys.add(key);
        offsets[i] = offset;
        linesBefore[i] = lines;
      }
      last = key;
      rows++;
    }

    /**
     * The reader reached the file's end having counted {@code bytes}: keeps the index when they are
     * the version's size (every line ended by one byte, so the offsets are the file's).
     */
    void end(long bytes) {
      SourceTableIndex index = index(bytes);
      if (index != null) {
        synchronized (slot) {
          slot.index = index;
        }
      }
    }

    /** The index recorded, when {@code bytes}, the bytes counted, are the version's size. */
    SourceTableIndex index(long bytes) {
      if (bytes != stamp.size()) {
        return null;
      }
      return new SourceTableIndex(
          stamp,
          keys.toArray(new KeyTuple[0]),
          Arrays.copyOf(offsets, keys.size()),
          Arrays.copyOf(linesBefore, keys.size()),
          keys.size(),
          true,
          rows,
          last);
    }
  }

  /** The index of {@code file} under {@code keyColumns} in the cache, or null. */
  static SourceTableIndex cached(Path file, List<Catalog.Column> keyColumns) {
    Slot slot = SLOTS.get(slotKey(file, keyColumns));
    if (slot == null) {
      return null;
    }
    synchronized (slot) {
      return slot.index;
    }
  }

  private static String slotKey(Path file, List<Catalog.Column> keyColumns) {
    return file + "|" + keyColumns;
  }

  private static Slot slot(String key) {
    if (SLOTS.size() >= MAX_SLOTS && !SLOTS.containsKey(key)) {
      SLOTS.clear();
    }
    return SLOTS.computeIfAbsent(key, k -> new Slot());
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // Nothing was read from it.
    }
  }

  /**
   * Indexes the version of {@code file} open in {@code channel}, read from its first line as {@code
   * readTable} reads it (the channel is read, not closed, and left at its end). A version with a
   * line the reader refuses (not one JSON object, a key value it refuses, a key not after the
   * previous one) or whose lines do not each end with one byte (a {@code \r\n}, an unended last
   * line) gets an index without entries: reads of it start at the first line, so such a line fails
   * every read that reaches it as before.
   *
   * @throws IOException when the file cannot be read
   */
  static SourceTableIndex build(
      Path file,
      FileStamp stamp,
      FileChannel channel,
      List<Catalog.Column> keyColumns,
      BiFunction<JsonNode, String, KeyTuple> key)
      throws IOException {
    Recorder recorder = new Recorder(null, stamp);
    FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file, channel, 0, 0).countingBytes();
    // Not closed: that would close the caller's channel, which the read goes on with.
    try {
      KeyTuple previous = null;
      for (JsonNode n = lines.next(); n != null; n = lines.next()) {
        LINES_BUILT.increment();
        KeyTuple k = key.apply(n, lines.where());
        if (previous != null && k.compareTo(previous) <= 0) {
          return empty(stamp);
        }
        previous = k;
        recorder.row(k, lines.lineStart(), lines.lineNumber() - 1);
      }
    } catch (RuntimeException e) {
      return empty(stamp);
    }
    SourceTableIndex index = recorder.index(lines.bytes());
    return index == null ? empty(stamp) : index;
  }

  private static SourceTableIndex empty(FileStamp stamp) {
    return new SourceTableIndex(stamp, new KeyTuple[0], new long[0], new int[0], 0, false, 0, null);
  }

  /** The lines {@link #build} passes have parsed in this JVM (for tests: what a seek cost). */
  static long linesBuilt() {
    return LINES_BUILT.sum();
  }

  /** Empties this JVM's cache of indexes (for tests: the readers of a new JVM). */
  static void forgetAll() {
    SLOTS.clear();
  }

  /**
   * The key index that the writer of a source table file writes beside it, {@code
   * .<schema>.<table>.jsonl.keys}, so that no reader parses the file to seek in it: JSON lines, the
   * first a header naming the version indexed ({@code indexes}: the file's name; {@code file_key},
   * {@code size}, {@code modified}: its {@link FileStamp}), the key columns ({@code key_columns}),
   * {@code rows}, {@code entries} and {@code last_key}; then one line per entry, every {@value
   * #EVERY}th row: {@code {"offset": <byte offset of its line>, "lines_before": <lines before it>,
   * "key": {<its key columns as in its line>}}}. A reader uses a sidecar only when its header names
   * the version it opened and the key columns it reads by; any other (stale, for other key columns,
   * malformed) is ignored and the version indexed by a pass as without one. Written only for a file
   * of more than {@value #EVERY} rows (a smaller one's pass is short); a file of fewer rows has its
   * earlier version's sidecar removed. Writing one is best effort: a sidecar not written leaves the
   * readers to their pass.
   */
  static final class Sidecar {
    /** Sidecars are replaced whole, outside the writer's replace seam (they are not its data). */
    private static final AtomicFiles FILES =
        new AtomicFiles(FileReplacer.atomicMove(), Sleeper.DEFAULT);

    private final List<Catalog.Column> keyColumns;
    private final List<String> entries = new ArrayList<>();
    private long rows;
    private long bytes;
    private JsonNode last;

    /**
     * A sidecar of the file about to be written.
     *
     * @param keyColumns the table's key columns, in key order: the file's lines are in their order
     */
    Sidecar(List<Catalog.Column> keyColumns) {
      this.keyColumns = List.copyOf(keyColumns);
    }

    /** The sidecar of {@code file}. */
    static Path of(Path file) {
      return file.resolveSibling("." + file.getFileName() + ".keys");
    }

    /**
     * One line the writer wrote, after the line before it in key order.
     *
     * @param row the line's object (its key columns are taken as written)
     * @param line the line's text, written with one {@code \n} after it
     */
    void line(JsonNode row, String line) {
      if (rows % EVERY == 0) {
        ObjectNode entry = FakeFormat.object();
        entry.put("offset", bytes);
        entry.put("lines_before", rows);
        entry.set("key", keyOf(row));
        entries.add(FakeFormat.line(entry));
      }
      last = row;
      rows++;
      bytes += FakeFormat.JsonLines.utf8Length(line) + 1;
    }

    private ObjectNode keyOf(JsonNode row) {
      ObjectNode key = FakeFormat.object();
      for (Catalog.Column c : keyColumns) {
        key.set(c.name(), row.get(c.name()));
      }
      return key;
    }

    /**
     * The lines are written and {@code file} is in place: writes its sidecar, stamped with the
     * version now in place (when its size is the bytes written), or removes an older one.
     */
    void writeFor(Path file) {
      Path sidecar = of(file);
      try {
        FileStamp stamp = FileStamp.of(file);
        if (rows <= EVERY || stamp.size() != bytes) {
          Files.deleteIfExists(sidecar);
          return;
        }
        ObjectNode header = version(file, stamp);
        header.put("key_columns", keyColumns.toString());
        header.put("rows", rows);
        header.put("entries", entries.size());
        header.set("last_key", keyOf(last));
        FILES.write(
            sidecar,
            out -> {
              out.write(FakeFormat.line(header));
              out.write('\n');
              for (String entry : entries) {
                out.write(entry);
                out.write('\n');
              }
            });
      } catch (IOException | UncheckedIOException e) {
        // Best effort: without a current sidecar the readers index the file themselves.
      }
    }

    /**
     * {@code to} was written as a copy of {@code from}'s bytes: gives it {@code from}'s sidecar,
     * stamped with {@code to}'s version, when that sidecar is current (else removes {@code to}'s).
     * Best effort, as {@link #writeFor}.
     */
    static void copy(Path from, Path to) {
      Path target = of(to);
      try {
        FileStamp source = FileStamp.of(from);
        FileStamp copy = FileStamp.of(to);
        JsonNode header = null;
        if (Files.exists(of(from)) && copy.size() == source.size()) {
          try (BufferedReader in = Files.newBufferedReader(of(from), StandardCharsets.UTF_8)) {
            String first = in.readLine();
            header = first == null ? null : FakeFormat.MAPPER.readTree(first);
            if (header instanceof ObjectNode h && matches(h, version(from, source))) {
              h.setAll(version(to, copy));
              FILES.write(
                  target,
                  out -> {
                    out.write(FakeFormat.line(h));
                    out.write('\n');
                    in.transferTo(out);
                  });
              return;
            }
          }
        }
        Files.deleteIfExists(target);
      } catch (IOException | RuntimeException e) {
        // Best effort: without a current sidecar the readers index the file themselves.
      }
    }

    /** The header's fields that name a version of {@code file}. */
    private static ObjectNode version(Path file, FileStamp stamp) {
      ObjectNode v = FakeFormat.object();
      v.put("indexes", file.getFileName().toString());
      v.put("file_key", String.valueOf(stamp.fileKey()));
      v.put("size", stamp.size());
      v.put("modified", String.valueOf(stamp.modified()));
      return v;
    }

    /** True when {@code header} has each of {@code fields} with the same text. */
    private static boolean matches(JsonNode header, ObjectNode fields) {
      for (Iterator<String> names = fields.fieldNames(); names.hasNext(); ) {
        String name = names.next();
        JsonNode value = header.get(name);
        if (value == null || !value.asText().equals(fields.get(name).asText())) {
          return false;
        }
      }
      return true;
    }

    /**
     * The index in {@code file}'s sidecar, when it is of the version stamped {@code stamp} and of
     * {@code keyColumns}; else (no sidecar, a stale one, one the reader cannot use) null. The
     * entries' keys are parsed with {@code key}, as the lines' keys are.
     */
    static SourceTableIndex load(
        Path file,
        FileStamp stamp,
        List<Catalog.Column> keyColumns,
        BiFunction<JsonNode, String, KeyTuple> key) {
      ObjectNode wanted = version(file, stamp);
      wanted.put("key_columns", keyColumns.toString());
      try (FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(of(file))) {
        JsonNode header = lines.next();
        if (header == null || !matches(header, wanted)) {
          return null;
        }
        long rows = header.path("rows").asLong(-1);
        int n = header.path("entries").asInt(-1);
        if (n <= 0 || n > rows) {
          return null;
        }
        KeyTuple lastKey = key.apply(header.get("last_key"), lines.where());
        KeyTuple[] keys = new KeyTuple[n];
        long[] offsets = new long[n];
        int[] linesBefore = new int[n];
        for (int i = 0; i < n; i++) {
          JsonNode entry = lines.next();
          if (entry == null) {
            return null;
          }
          keys[i] = key.apply(entry.get("key"), lines.where());
          offsets[i] = entry.path("offset").asLong(-1);
          linesBefore[i] = entry.path("lines_before").asInt(-1);
          boolean inOrder =
              i == 0
                  ? offsets[0] == 0 && linesBefore[0] == 0
                  : keys[i].compareTo(keys[i - 1]) > 0
                      && offsets[i] > offsets[i - 1]
                      && linesBefore[i] > linesBefore[i - 1];
          if (!inOrder || offsets[i] >= stamp.size()) {
            return null;
          }
        }
        if (lines.next() != null || lastKey.compareTo(keys[n - 1]) < 0) {
          return null;
        }
        return new SourceTableIndex(stamp, keys, offsets, linesBefore, n, true, rows, lastKey);
      } catch (RuntimeException e) {
        return null;
      }
    }
  }
}
