package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.apache.beam.sdk.util.Sleeper;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Replays a directory in the simulator's format (an export, {@link FakeExport}, or any simulator
 * database) into a simulator database, commit by commit, so a job can stream it in parts: {@link
 * #importInto} starts a new database with the export's server, tables and capture instances and its
 * first commits; {@link #replay} appends the next ones. A step ends at an LSN ({@code upTo},
 * inclusive), after a number of commits ({@code cdc.lsn_time_mapping} rows, idle entries included),
 * or at the export's end.
 *
 * <p>What a step writes, for the export's commits after the database's {@code max_lsn} up to the
 * step's last commit E, in the writing rules' order (docs/fake-format.md), so readers see the
 * step's commits only once its mapping rows are in:
 *
 * <ol>
 *   <li>{@code server.json}: {@code next_lsn} past E and past the DDL written (the export's own
 *       {@code next_lsn} at its end), {@code clock_utc} the commit time of E. An import also takes
 *       the export's time zone, {@code sys.tables}, {@code sys.columns} and source tables' rows:
 *       the tables as the export holds them (its end), as a snapshot whose rows hold later commits
 *       that the stream then replays.
 *   <li>{@code cdc.change_tables} (with its captured and index columns): the export's instances
 *       whose {@code start_lsn} the step reaches (at most E; every one at the export's end), as a
 *       {@code sys.sp_cdc_enable_table} at that point would show them. Instances already in the
 *       database keep their low watermark (a cleanup run on the database between steps stays).
 *   <li>each change table: the export's rows with {@code __$start_lsn} after the database's {@code
 *       max_lsn} and at most E, appended as they are.
 *   <li>{@code cdc.ddl_history}: the export's rows with {@code ddl_lsn} in that interval (every
 *       remaining one at the export's end).
 *   <li>{@code cdc.lsn_time_mapping}: the step's commits, last.
 * </ol>
 *
 * <p>Replay continues only a database the export's steps wrote: every commit of the database must
 * be a commit of the export (same LSN and times) and its {@code next_lsn} must not be past the next
 * commit to replay (a {@code commit}, an idle entry or DDL written into the database since refuses
 * the replay with {@link IllegalStateException}, nothing written). One writer per directory.
 */
public final class FakeReplay {
  private FakeReplay() {}

  /**
   * What a step wrote.
   *
   * @param imported true for {@link #importInto}
   * @param firstCommit the first commit replayed, if any
   * @param lastCommit the last commit replayed, if any
   * @param lastCommitTime the UTC commit time of {@code lastCommit}
   * @param commits mapping rows written
   * @param changeRows change rows written, all instances together
   * @param ddlRows DDL history rows written
   * @param instancesAdded capture instances added to the database by this step
   * @param remainingCommits the export's commits still to replay after this step
   * @param maxLsn the database's {@code max_lsn} after the step, if it has a commit
   */
  public record Step(
      boolean imported,
      Optional<Lsn> firstCommit,
      Optional<Lsn> lastCommit,
      Optional<Instant> lastCommitTime,
      int commits,
      long changeRows,
      int ddlRows,
      List<String> instancesAdded,
      int remainingCommits,
      Optional<Lsn> maxLsn) {
    public Step {
      instancesAdded = List.copyOf(instancesAdded);
    }
  }

  /**
   * Imports {@code export} into a new simulator database {@code target}: its server, tables and the
   * capture instances the step reaches, then its commits up to {@code upTo} or the first {@code
   * commits} of them (every one when both are empty).
   *
   * @param export a directory in the simulator's format
   * @param target a new or empty directory
   * @param upTo the last LSN to replay (inclusive), or empty
   * @param commits how many commits to replay, or empty; not with {@code upTo}
   * @return what was written
   * @throws IllegalArgumentException when {@code target} already holds something
   * @throws CdcException when {@code export} holds no simulator database or is malformed
   * @throws UncheckedIOException when a file cannot be read or written
   */
  public static Step importInto(Path export, Path target, Optional<Lsn> upTo, OptionalInt commits) {
    FakeExport.requireNewOrEmpty(target);
    return step(export, target, upTo, commits, true);
  }

  /**
   * Replays the export's next commits into {@code target}, a database an {@link #importInto} of the
   * same export started: up to {@code upTo}, the next {@code commits}, or every remaining one.
   *
   * @param export a directory in the simulator's format
   * @param target the simulator database to continue
   * @param upTo the last LSN to replay (inclusive), or empty
   * @param commits how many commits to replay, or empty; not with {@code upTo}
   * @return what was written ({@link Step#commits()} 0 when nothing is left)
   * @throws IllegalStateException when {@code target} holds commits the export does not, or has
   *     issued LSNs past the next commit to replay
   * @throws CdcException when either directory holds no simulator database or is malformed
   * @throws UncheckedIOException when a file cannot be read or written
   */
  public static Step replay(Path export, Path target, Optional<Lsn> upTo, OptionalInt commits) {
    if (!Catalog.exists(target)) {
      throw new CdcException(
          "No fake SQL Server in " + target + " (" + FakeFormat.SERVER + " is missing)");
    }
    return step(export, target, upTo, commits, false);
  }

  /** A line of a JSON Lines file: its LSN, its text as written and its object. */
  private record Line(Lsn lsn, String text, JsonNode node) {}

  private static Step step(
      Path export, Path target, Optional<Lsn> upTo, OptionalInt commits, boolean initialize) {
    Catalog source = Catalog.load(export);
    List<Line> mapping = lines(export.resolve(FakeFormat.LSN_TIME_MAPPING), "start_lsn");
    mapping.sort((a, b) -> a.lsn().compareTo(b.lsn()));
    Set<Catalog.MappingRow> exported = new HashSet<>();
    for (Line l : mapping) {
      exported.add(Catalog.mappingRow(l.node(), FakeFormat.LSN_TIME_MAPPING));
    }

    Catalog catalog;
    Lsn position = null;
    if (initialize) {
      catalog = new Catalog();
      catalog.server.timeZone = source.server.timeZone;
      catalog.tables.putAll(source.tables);
    } else {
      catalog = Catalog.load(target);
      for (Line l : lines(target.resolve(FakeFormat.LSN_TIME_MAPPING), "start_lsn")) {
        if (!exported.contains(Catalog.mappingRow(l.node(), FakeFormat.LSN_TIME_MAPPING))) {
          throw new IllegalStateException(
              target
                  + " holds commit "
                  + l.lsn()
                  + ", which "
                  + export
                  + " does not: replay continues only a database imported from that export");
        }
        position = position == null ? l.lsn() : Lsn.max(position, l.lsn());
      }
    }

    List<Line> step = new ArrayList<>();
    int remaining = 0;
    for (Line l : mapping) {
      if (position != null && !l.lsn().isAfter(position)) {
        continue;
      }
      boolean take =
          upTo.map(u -> !l.lsn().isAfter(u)).orElse(true)
              && (commits.isEmpty() || step.size() < commits.getAsInt());
      if (take && remaining == 0) {
        step.add(l);
      } else {
        remaining++;
      }
    }
    boolean atEnd = remaining == 0;
    if (!initialize && !step.isEmpty() && catalog.server.nextLsn.isAfter(step.get(0).lsn())) {
      throw new IllegalStateException(
          target
              + " has issued LSNs of its own (next_lsn "
              + catalog.server.nextLsn
              + ") past the next commit to replay, "
              + step.get(0).lsn()
              + ": replay continues only a database nothing else wrote to");
    }
    if (!initialize && step.isEmpty()) {
      return new Step(
          false,
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          0,
          0,
          0,
          List.of(),
          0,
          Optional.ofNullable(position));
    }
    Lsn after = position == null ? Lsn.ZERO : position;
    Lsn end = step.isEmpty() ? after : step.get(step.size() - 1).lsn();
    Lsn horizon = atEnd ? Lsn.MAX : end;

    // Capture instances the step reaches.
    List<String> added = new ArrayList<>();
    for (Catalog.Instance i : source.instances.values()) {
      boolean reached = !i.startLsn.isAfter(horizon) && (initialize || i.startLsn.isAfter(after));
      if (reached && !catalog.instances.containsKey(i.name)) {
        catalog.instances.put(i.name, i);
        added.add(i.name);
      }
    }

    // DDL rows in (after, horizon] of the database's instances.
    List<String> ddl = new ArrayList<>();
    Lsn lastDdl = end;
    for (Line l : lines(export.resolve(FakeFormat.DDL_HISTORY), "ddl_lsn")) {
      String instance = ddlInstance(l);
      if (l.lsn().isAfter(after)
          && !l.lsn().isAfter(horizon)
          && catalog.instances.containsKey(instance)) {
        ddl.add(l.text());
        lastDdl = Lsn.max(lastDdl, l.lsn());
      }
    }

    Lsn next = Lsn.fromBigInteger(Lsn.max(end, lastDdl).toBigInteger().add(FakeSqlServer.LSN_STEP));
    if (atEnd) {
      next = Lsn.max(next, source.server.nextLsn);
    }
    if (!initialize) {
      next = Lsn.max(next, catalog.server.nextLsn);
    }
    catalog.server.nextLsn = next;
    Optional<Instant> endTime = Optional.empty();
    if (!step.isEmpty()) {
      try (FileBackedCdcClient client = new FileBackedCdcClient(export)) {
        endTime = client.commit(end).map(c -> c.commitTime());
      }
      Instant clock = endTime.orElse(null);
      if (clock != null && (catalog.server.clock == null || clock.isAfter(catalog.server.clock))) {
        catalog.server.clock = clock;
      }
    }

    AtomicFiles files = new AtomicFiles(FileReplacer.atomicMove(), Sleeper.DEFAULT);
    try {
      Files.createDirectories(target);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create " + target + ": " + e.getMessage(), e);
    }
    write(files, target.resolve(FakeFormat.SERVER), List.of(FakeFormat.line(catalog.serverJson())));
    if (initialize) {
      write(files, target.resolve(FakeFormat.SYS_TABLES), FakeFormat.lines(catalog.sysTables()));
      write(files, target.resolve(FakeFormat.SYS_COLUMNS), FakeFormat.lines(catalog.sysColumns()));
    }
    if (initialize || !added.isEmpty()) {
      write(
          files,
          target.resolve(FakeFormat.CHANGE_TABLES),
          FakeFormat.lines(catalog.changeTables()));
      write(
          files,
          target.resolve(FakeFormat.CAPTURED_COLUMNS),
          FakeFormat.lines(catalog.capturedColumns()));
      write(
          files,
          target.resolve(FakeFormat.INDEX_COLUMNS),
          FakeFormat.lines(catalog.indexColumns()));
    }
    long changeRows = 0;
    for (Catalog.Instance i : catalog.instances.values()) {
      String name = FakeFormat.changeTableFile(i.name);
      List<String> rows = new ArrayList<>();
      for (Line l : lines(export.resolve(name), FakeFormat.START_LSN)) {
        if (l.lsn().isAfter(after) && !l.lsn().isAfter(horizon)) {
          rows.add(l.text());
        }
      }
      if (!rows.isEmpty() || (added.contains(i.name) && !Files.exists(target.resolve(name)))) {
        files.append(target.resolve(name), rows);
      }
      changeRows += rows.size();
    }
    if (initialize) {
      for (Catalog.Table t : catalog.tables.values()) {
        Path from = export.resolve(FakeFormat.sourceTableFile(t.schema, t.name));
        if (Files.exists(from)) {
          files.write(
              target.resolve(FakeFormat.sourceTableFile(t.schema, t.name)),
              out -> {
                try (Reader in = Files.newBufferedReader(from, StandardCharsets.UTF_8)) {
                  in.transferTo(out);
                }
              });
        }
      }
    }
    if (!ddl.isEmpty()) {
      files.append(target.resolve(FakeFormat.DDL_HISTORY), ddl);
    }
    files.append(
        target.resolve(FakeFormat.LSN_TIME_MAPPING), step.stream().map(Line::text).toList());
    Optional<Lsn> max = step.isEmpty() ? Optional.ofNullable(position) : Optional.of(end);
    return new Step(
        initialize,
        step.isEmpty() ? Optional.empty() : Optional.of(step.get(0).lsn()),
        step.isEmpty() ? Optional.empty() : Optional.of(end),
        endTime,
        step.size(),
        changeRows,
        ddl.size(),
        added,
        remaining,
        max);
  }

  private static String ddlInstance(Line l) {
    return l.node().path("capture_instance").asText();
  }

  /** The non-blank lines of a JSON Lines file with the LSN of their {@code field}. */
  private static List<Line> lines(Path file, String field) {
    List<Line> out = new ArrayList<>();
    try (FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file)) {
      for (JsonNode n = lines.next(); n != null; n = lines.next()) {
        out.add(new Line(FakeFormat.lsn(n, field, lines.where()), lines.lastLine(), n));
      }
    }
    return out;
  }

  private static void write(AtomicFiles files, Path file, Iterable<String> lines) {
    files.write(
        file,
        out -> {
          for (String line : lines) {
            out.write(line);
            out.write('\n');
          }
        });
  }
}
