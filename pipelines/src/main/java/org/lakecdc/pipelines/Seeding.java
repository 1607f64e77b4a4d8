package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.cdc.transforms.Counts;
import org.lakecdc.cdc.transforms.bronze.BronzeTable;
import org.lakecdc.cdc.transforms.delta.DataFileAction;
import org.lakecdc.cdc.transforms.delta.DeltaColumn;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
import org.lakecdc.cdc.transforms.position.StreamPosition;
import org.lakecdc.cdc.transforms.write.WriteSnapshotToDelta;
import org.lakecdc.cdc.transforms.write.WriteSnapshotToDelta.SeedSource;
import org.lakecdc.cdc.transforms.write.WriteSnapshotToDelta.SnapshotRecord;
import org.lakecdc.mssqlcdc.client.CaptureInstance;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.client.DataLossError;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.lakecdc.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.mssqlcdc.schema.ValueConverter;

/**
 * Seeds a new target from an existing copy of the source table instead of the bootstrap snapshot
 * (BEHAVIOUR.md 6.6, ADR 0025): {@link #check} runs every check before anything is written and
 * reads the copy; {@link #write} commits it as the target's snapshot at L, the LSN of the copy's
 * {@code as_of}, so the stream continues after L.
 *
 * <p>The launcher reads the copy ({@link DeltaTables#scan(String)}) and holds its rows in memory,
 * then writes the data files itself: fine for copies of millions of rows. For billion-row copies
 * the next step is a Beam pipeline that reads the copy's data files in parallel (one element per
 * file) and writes them with {@link WriteSnapshotToDelta}, whose committer already commits all
 * files in one transaction.
 */
final class Seeding {
  private Seeding() {}

  /**
   * What {@link #check} found.
   *
   * @param lsn L: the LSN of the copy's as_of (the stamp of its rows)
   * @param commitTime the UTC commit time of L
   * @param rows the copy's rows as change rows of the job's schema, or null when the target already
   *     holds this seed (a rerun: nothing is written)
   */
  record Plan(Lsn lsn, Instant commitTime, @Nullable List<Row> rows) {
    boolean alreadySeeded() {
      return rows == null;
    }
  }

  /**
   * Checks the seed, in order, before anything is written: the target holding this very seed (same
   * copy, same as_of: a rerun, nothing else is checked or read); the copy's columns against the
   * job's change schema; as_of to L ({@link CdcClient#lastCommitLsnAtOrBefore}, or the LSN given);
   * the target (a rerun of the same seed, or refused); L against {@code max_lsn}; the changes right
   * after L still held (BEHAVIOUR.md 9.2); then reads and converts the copy.
   *
   * @return the plan; {@link Plan#alreadySeeded()} when the target holds this seed already
   * @throws IllegalArgumentException naming the option: the copy is no Delta table or lacks
   *     captured columns (without {@code --seedAllowMissingColumns}), a value cannot be converted,
   *     the target holds another snapshot or already streams, L is after {@code max_lsn}
   * @throws DataLossError when no commit is at or before as_of (the copy is older than what CDC
   *     holds), or CDC no longer holds the changes right after L (older than the retention)
   */
  static Plan check(CdcToDeltaJob.Config config, DeltaTables tables, Schema changeSchema) {
    SeedCopy seed = config.seed();
    String copy = seed.table();
    Optional<SnapshotRecord> existing =
        tables.exists(config.bronzePath())
            ? WriteSnapshotToDelta.committedRecord(tables, config.bronzePath())
            : Optional.empty();
    if (existing.isPresent()
        && new SeedSource(copy, seed.asOfText()).equals(existing.get().seed())) {
      // The same command again: the seed is found by its record, the copy is not read again
      // (it may be gone by now).
      return new Plan(existing.get().lsn(), existing.get().commitTime(), null);
    }
    // 1. The copy's columns.
    if (!tables.exists(copy)) {
      throw new IllegalArgumentException(
          "--seedTable "
              + copy
              + " is not a Delta table: pass the path or URI of a Delta table holding a copy of"
              + " the source table");
    }
    List<DeltaColumn> copyColumns;
    try {
      copyColumns = tables.describe(copy).columns();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "--seedTable " + copy + " cannot be read as a copy: " + CommandLine.firstLine(e), e);
    }
    Map<String, String> copyNames = new HashMap<>();
    for (DeltaColumn c : copyColumns) {
      copyNames.put(c.name().toLowerCase(Locale.ROOT), c.name());
    }
    List<ColumnSpec> captured = ChangeSchema.capturedColumns(changeSchema);
    List<String> missing = new ArrayList<>();
    for (ColumnSpec c : captured) {
      if (!copyNames.containsKey(c.name().toLowerCase(Locale.ROOT))) {
        missing.add(c.name());
      }
    }
    if (!missing.isEmpty() && !seed.allowMissingColumns()) {
      throw new IllegalArgumentException(
          "--seedTable "
              + copy
              + " lacks captured columns "
              + missing
              + " of "
              + config.captureInstance()
              + ": add them to the copy, or pass --seedAllowMissingColumns to seed them as NULL");
    }
    try (CdcClient client = config.clientFactory().open()) {
      // 2. as_of to L.
      Lsn l;
      if (seed.asOfLsn() != null) {
        l = seed.asOfLsn();
      } else {
        Optional<Lsn> mapped = client.lastCommitLsnAtOrBefore(seed.asOf());
        if (mapped.isEmpty()) {
          if (existing.isPresent() && !existing.get().commitTime().isAfter(seed.asOf())) {
            // A rerun after cleanup passed as_of: the seed (or snapshot) is found by its time.
            return new Plan(existing.get().lsn(), existing.get().commitTime(), null);
          }
          throw new DataLossError(
              config.captureInstance(),
              Lsn.ZERO,
              client.minLsn(config.captureInstance()),
              "--seedAsOf "
                  + seed.asOfText()
                  + ": the mapping holds no commit at or before "
                  + seed.asOfText()
                  + ": the copy is older than what CDC holds; seed a newer copy, or take a"
                  + " snapshot (--bootstrap)");
        }
        l = mapped.get();
      }
      // 3. The target: a rerun of this seed, or refused.
      if (existing.isPresent()) {
        SnapshotRecord found = existing.get();
        if (found.lsn().equals(l)) {
          return new Plan(l, found.commitTime(), null);
        }
        throw new IllegalArgumentException(
            "--seedTable "
                + copy
                + ": target "
                + config.bronzePath()
                + " already holds "
                + (found.seed() != null
                    ? "a seed of " + found.seed().table() + " as of " + found.seed().asOf()
                    : "a snapshot")
                + " at LSN "
                + found.lsn()
                + ", not at "
                + l
                + " (--seedAsOf "
                + seed.asOfText()
                + "): a second seed is refused; run without --seedTable to go on streaming, or"
                + " seed a new target");
      }
      if (tables.exists(config.bronzePath())) {
        Optional<StreamPosition> position =
            StreamPosition.fromJson(
                tables.domainMetadata(config.bronzePath(), StreamPosition.BRONZE_DOMAIN));
        if (position.isPresent()) {
          throw new IllegalArgumentException(
              "--seedTable seeds only a new target: "
                  + config.bronzePath()
                  + " already streams (position "
                  + position.get().endLsn()
                  + ") without a snapshot; seed a new target");
        }
      }
      // 4. L against max_lsn and the retention.
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty() || l.isAfter(max.get())) {
        throw new IllegalArgumentException(
            "--seedAsOf "
                + seed.asOfText()
                + ": LSN "
                + l
                + " is after sys.fn_cdc_get_max_lsn() "
                + max.map(Lsn::toString).orElse("(none yet)")
                + ": CDC has captured nothing there yet; pass an LSN the capture job has reached");
      }
      Lsn next = l.increment();
      List<CaptureInstance> instances = client.captureInstances(config.captureInstance());
      CaptureInstance holder = instances.get(0);
      for (CaptureInstance i : instances) {
        if (i.startLsn().isPresent() && !i.startLsn().get().isAfter(next)) {
          holder = i;
        }
      }
      Lsn min = client.minLsn(holder.name());
      if (next.isBefore(min)) {
        throw new DataLossError(
            holder.name(),
            next,
            min,
            "--seedAsOf "
                + seed.asOfText()
                + " = LSN "
                + l
                + ": CDC no longer holds the changes right after it (min_lsn of "
                + holder.name()
                + " is "
                + min
                + "): the copy is older than the CDC retention; seed a newer copy");
      }
      Instant time =
          client
              .lastCommitAtOrBefore(l)
              .map(Commit::commitTime)
              .orElseThrow(
                  () ->
                      new DataLossError(
                          config.captureInstance(),
                          next,
                          min,
                          "--seedAsOf "
                              + seed.asOfText()
                              + ": the mapping holds no commit at or before LSN "
                              + l
                              + ": the copy is older than what CDC holds; seed a newer copy"));
      // 5. Read the copy and convert its values to the bronze types.
      return new Plan(
          l, time, changeRows(config, tables, changeSchema, captured, copyNames, l, time));
    }
  }

  private static List<Row> changeRows(
      CdcToDeltaJob.Config config,
      DeltaTables tables,
      Schema changeSchema,
      List<ColumnSpec> captured,
      Map<String, String> copyNames,
      Lsn l,
      Instant time) {
    boolean commandId = ChangeSchema.hasCommandId(changeSchema);
    LocalDateTime commitTs = LocalDateTime.ofInstant(time, ZoneOffset.UTC);
    List<Row> rows = new ArrayList<>();
    for (Map<String, Object> copyRow : tables.scan(config.seed().table())) {
      List<Object> values = new ArrayList<>(changeSchema.getFieldCount());
      values.add(config.captureInstance());
      values.add(l.toString());
      values.add(null);
      values.add(MetadataColumns.OP_SNAPSHOT);
      if (commandId) {
        values.add(null);
      }
      values.add(commitTs);
      for (ColumnSpec c : captured) {
        String name = copyNames.get(c.name().toLowerCase(Locale.ROOT));
        Object value = name == null ? null : copyRow.get(name);
        try {
          values.add(ValueConverter.toBeamValue(value, c.type(), c.name()));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "--seedTable "
                  + config.seed().table()
                  + ": column "
                  + name
                  + " cannot be converted to the bronze type of "
                  + c.name()
                  + " ("
                  + c.type()
                  + "): "
                  + CommandLine.firstLine(e),
              e);
        }
      }
      rows.add(Row.withSchema(changeSchema).addValues(values).build());
    }
    return rows;
  }

  /**
   * Writes the plan's rows to bronze in one commit, exactly like a bootstrap snapshot's ({@link
   * WriteSnapshotToDelta#commit}): op 0, {@code _start_lsn} and {@code _snapshot} = L, {@code
   * _commit_ts} = its commit time, with the snapshot record ({@code "kind": "seed"}) and the
   * position at L. Prints one line.
   *
   * @return the rows written, or -1 when a snapshot was already recorded
   */
  static long write(
      CdcToDeltaJob.Config config,
      DeltaTables tables,
      Schema changeSchema,
      Plan plan,
      PrintStream out) {
    SeedCopy seed = config.seed();
    Schema bronzeSchema = BronzeTable.schema(changeSchema);
    String stamp = plan.lsn().toString();
    List<Row> bronzeRows = new ArrayList<>(plan.rows().size());
    for (Row r : plan.rows()) {
      bronzeRows.add(BronzeTable.toBronzeRow(bronzeSchema, r, null, stamp, null));
    }
    List<DataFileAction> files =
        tables.writeDataFiles(config.bronzePath(), bronzeSchema, bronzeRows);
    StreamPosition atL =
        new StreamPosition(
                config.appId(), 0, -1, plan.lsn(), plan.commitTime(), config.captureInstance())
            .ofTarget(config.bronzePath(), tables.tableId(config.bronzePath()));
    long rows =
        WriteSnapshotToDelta.commit(
            tables,
            config.bronzePath(),
            atL,
            files,
            bronzeRows.size(),
            new SeedSource(seed.table(), seed.asOfText()));
    if (rows >= 0) {
      out.printf(
          "Seeded %s from %s: %s as of %s = LSN %s (committed at %s UTC)%n",
          config.bronzePath(),
          seed.table(),
          Counts.of(rows, "row", "rows"),
          seed.asOfText(),
          plan.lsn(),
          plan.commitTime());
    }
    return rows;
  }
}
