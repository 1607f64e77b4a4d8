package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SeedCopy;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * Seeding a new target from an existing copy (docs/options.md "Seeding from a copy") on the fake:
 * C087's logic (the copy stamped with the last commit at or before as_of, the stream continuing
 * after it, reruns writing nothing twice) and C084's refusals (as_of older than CDC, the copy older
 * than the retention, an LSN after max_lsn, missing columns), each before anything is written.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SeedTest {
  @TempDir Path dir;

  private static final List<DeltaColumn> COPY_COLUMNS =
      List.of(
          DeltaColumn.nullable("order_id", OutputType.INT, null),
          DeltaColumn.nullable("STATUS", OutputType.STRING, null),
          DeltaColumn.nullable("amount", OutputType.decimal(18, 2), null),
          DeltaColumn.nullable("updated_at", OutputType.TIMESTAMP_NTZ, null),
          DeltaColumn.nullable("note", OutputType.STRING, null));

  /** Writes a copy as a Delta table (a silver-like table) and returns its path. */
  private String copy(
      JobFixture f, String name, List<DeltaColumn> columns, List<List<Object>> rows) {
    String path = dir.resolve("copies/" + name).toString();
    f.tables.createIfAbsent(path, TableDefinition.of(TableKind.SILVER, columns));
    Schema schema = DeltaColumn.toBeamSchema(columns);
    List<Row> beamRows = new ArrayList<>();
    for (List<Object> r : rows) {
      beamRows.add(Row.withSchema(schema).addValues(r).build());
    }
    f.tables.append(path, schema, beamRows, null, 0, Map.of());
    return path;
  }

  /** The source table as it is now, as copy rows with an extra column. */
  private static List<List<Object>> copyOfSource(JobFixture f) {
    List<List<Object>> rows = new ArrayList<>();
    for (Map<String, Object> r : f.db.rows(ORDERS)) {
      rows.add(
          Arrays.asList(
              r.get("order_id"),
              r.get("status"),
              r.get("amount"),
              LocalDateTime.of(2026, 9, 28, 10, 0),
              "dropped"));
    }
    return rows;
  }

  private static JobConfig seeded(JobFixture f, String copy, String asOf) {
    return f.config().withSeed(SeedCopy.parse(copy, asOf, false));
  }

  private static List<Row> bronzeRows(JobFixture f) {
    return f.tables.scan(f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns()));
  }

  private static List<Row> snapshotRows(List<Row> bronze) {
    return bronze.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0).toList();
  }

  private static Map<Integer, List<Object>> source(JobFixture f) {
    Map<Integer, List<Object>> rows = new TreeMap<>();
    for (Map<String, Object> r : f.db.rows(ORDERS)) {
      rows.put(
          (Integer) r.get("order_id"),
          List.of(r.get("status"), BronzeOracle.normal(r.get("amount"))));
    }
    return rows;
  }

  private static List<Row> bootstrapEvents(JobFixture f) {
    return f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
        .filter(r -> FactsTable.EVENT_BOOTSTRAP.equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  @Test
  void c087TheCopyIsStampedWithTheLastCommitAtOrBeforeAsOfAndTheStreamContinuesAfterIt() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    FakeTx.insert(f, at(0), 1, 2, 3);
    f.db.transaction(at(1)).update(ORDERS, List.of(2), Map.of("status", "paid")).commit();
    Lsn l = f.db.transaction(at(2)).insert(ORDERS, order(4, "new", "4.00")).commit();
    String copy = copy(f, "orders", COPY_COLUMNS, copyOfSource(f));
    Instant asOf = at(2).plusSeconds(30);
    // Commits after as_of, before the seed runs: the stream picks them up.
    f.db.transaction(at(3)).update(ORDERS, List.of(1), Map.of("status", "shipped")).commit();
    f.db.transaction(at(4)).delete(ORDERS, List.of(3)).commit();

    JobSummary first = f.run(seeded(f, copy, asOf.toString()));
    assertEquals(4, first.snapshotRows());
    assertTrue(
        f.lastOutput.contains(
            "Seeded "
                + f.bronze
                + " from "
                + copy
                + ": 4 rows as of 2026-09-28T13:52:30Z = LSN "
                + l
                + " (committed at 2026-09-28T13:52:00Z)"),
        f.lastOutput);
    List<Row> bronze = bronzeRows(f);
    List<Row> seed = snapshotRows(bronze);
    assertEquals(
        List.of("1 new", "2 paid", "3 new", "4 new"),
        seed.stream()
            .map(r -> r.getInt32("order_id") + " " + r.getString("status"))
            .sorted()
            .toList());
    for (Row r : seed) {
      assertEquals(l.toString(), r.getString(MetadataColumns.START_LSN));
      assertEquals(l.toString(), r.getString(MetadataColumns.SNAPSHOT));
      assertEquals(CI, r.getString(MetadataColumns.CAPTURE_INSTANCE));
      assertNull(r.getString(MetadataColumns.SEQVAL));
      assertNull(r.getInt32(MetadataColumns.COMMAND_ID));
      assertNull(r.getInt32(MetadataColumns.BATCH_ID));
      assertNull(r.getInt32(MetadataColumns.CHUNK));
      LocalDateTime commitTs =
          r.getLogicalTypeValue(MetadataColumns.COMMIT_TS, LocalDateTime.class);
      assertEquals(LocalDateTime.of(2026, 9, 28, 13, 52), commitTs);
      assertFalse(commitTs.toInstant(ZoneOffset.UTC).isAfter(asOf), "commit_ts <= as_of");
      assertEquals(
          LocalDateTime.of(2026, 9, 28, 10, 0),
          r.getLogicalTypeValue("updated_at", LocalDateTime.class));
    }
    assertFalse(
        f.tables.describe(f.bronze).columns().stream().anyMatch(c -> c.name().equals("note")),
        "the copy's extra column is dropped");
    // Exactly the commits after L: the update of 1 (two rows) and the delete of 3.
    List<Row> changes =
        bronze.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) != 0).toList();
    assertEquals(3, changes.size());
    assertTrue(changes.stream().allMatch(r -> Lsn.parse(r.getString("_start_lsn")).isAfter(l)));
    assertEquals(source(f), BronzeOracle.latest(bronze, "order_id", "status", "amount"));

    WriteSnapshotToDelta.SnapshotRecord record =
        WriteSnapshotToDelta.committedRecord(f.tables, f.bronze).orElseThrow();
    assertEquals(l, record.lsn());
    assertEquals(4, record.rows());
    assertEquals(new WriteSnapshotToDelta.SeedSource(copy, "2026-09-28T13:52:30Z"), record.seed());
    List<Row> events = bootstrapEvents(f);
    assertEquals(1, events.size());
    assertEquals(l.toString(), events.get(0).getString(FactsTable.END_LSN));
    assertEquals(4L, events.get(0).getInt64(FactsTable.ROWS));
    assertEquals(
        "seed of " + copy + " as of 2026-09-28T13:52:30Z (dbo_orders)",
        events.get(0).getString(FactsTable.DETAIL));

    // The same command again: the seed is found, nothing written twice, the stream goes on.
    f.db.transaction(at(6)).insert(ORDERS, order(6, "new", "6.00")).commit();
    f.run(seeded(f, copy, asOf.toString()));
    assertFalse(f.lastOutput.contains("Seeded "), f.lastOutput);
    assertTrue(f.lastOutput.contains("holds the seed at LSN " + l), f.lastOutput);
    bronze = bronzeRows(f);
    assertEquals(4, snapshotRows(bronze).size());
    assertEquals(4, bronze.size() - snapshotRows(bronze).size());
    assertEquals(source(f), BronzeOracle.latest(bronze, "order_id", "status", "amount"));

    // After cleanup passed as_of, the mapping no longer holds it: the seed is found by its time.
    Lsn idle = f.db.idle(at(7));
    f.run(seeded(f, copy, asOf.toString()));
    f.db.cleanup(CI, idle);
    // (a second later than the recorded as_of, so the seed is not found by its record)
    f.run(seeded(f, copy, asOf.plusSeconds(1).toString()));
    assertTrue(f.lastOutput.contains("holds the seed at LSN " + l), f.lastOutput);

    // A bootstrap run takes no snapshot of its own.
    f.db.transaction(at(8)).update(ORDERS, List.of(4), Map.of("status", "paid")).commit();
    JobSummary boot = f.run(f.config().toBuilder().bootstrap(true).build());
    assertEquals(-1, boot.snapshotRows());
    bronze = bronzeRows(f);
    assertEquals(4, snapshotRows(bronze).size());
    assertEquals(source(f), BronzeOracle.latest(bronze, "order_id", "status", "amount"));
    assertEquals(1, bootstrapEvents(f).size());
  }

  @Test
  void c084SeedRefusesPointsCdcDoesNotHoldAndCopiesMissingColumnsBeforeWritingAnything() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t <= 2; t++) {
      f.db.transaction(at(t)).insert(ORDERS, order(t, "new", t + ".00")).commit();
    }
    String full = copy(f, "full", COPY_COLUMNS, copyOfSource(f));

    DataLossError early =
        assertThrows(DataLossError.class, () -> f.run(seeded(f, full, at(-1).toString())));
    assertEquals(
        "--seedAsOf 2026-09-28T13:49:00Z: the mapping holds no commit at or before"
            + " 2026-09-28T13:49:00Z: the copy is older than what CDC holds; seed a newer copy,"
            + " or take a snapshot (--bootstrap)",
        early.getMessage());
    assertFalse(f.tables.exists(f.bronze));

    String future = "0x" + "F".repeat(20);
    IllegalArgumentException after =
        assertThrows(IllegalArgumentException.class, () -> f.run(seeded(f, full, future)));
    assertTrue(
        after.getMessage().contains("is after sys.fn_cdc_get_max_lsn() 0x"), after.getMessage());
    assertTrue(after.getMessage().startsWith("--seedAsOf 0xFFFFFFFFFFFFFFFFFFFF: LSN "));
    assertFalse(f.tables.exists(f.bronze));

    List<DeltaColumn> idOnly = List.of(DeltaColumn.nullable("ORDER_ID", OutputType.INT, null));
    String narrow = copy(f, "narrow", idOnly, List.of(List.of(0)));
    IllegalArgumentException lacks =
        assertThrows(
            IllegalArgumentException.class,
            () -> f.run(seeded(f, narrow, at(2).plusSeconds(30).toString())));
    assertEquals(
        "--seedTable "
            + narrow
            + " lacks captured columns [status, amount, updated_at] of dbo_orders: add them to"
            + " the copy, or pass --seedAllowMissingColumns to seed them as NULL",
        lacks.getMessage());
    assertFalse(f.tables.exists(f.bronze));

    List<DeltaColumn> textId =
        List.of(
            DeltaColumn.nullable("order_id", OutputType.STRING, null),
            DeltaColumn.nullable("status", OutputType.STRING, null),
            DeltaColumn.nullable("amount", OutputType.STRING, null),
            DeltaColumn.nullable("updated_at", OutputType.STRING, null));
    String text = copy(f, "text", textId, List.of(Arrays.asList("abc", "new", "1.00", null)));
    IllegalArgumentException cast =
        assertThrows(
            IllegalArgumentException.class,
            () -> f.run(seeded(f, text, at(2).plusSeconds(30).toString())));
    assertTrue(
        cast.getMessage()
            .startsWith(
                "--seedTable " + text + ": column order_id cannot be converted to the bronze type"),
        cast.getMessage());
    // The copy is read by the seed's pipeline, after bronze was created: bronze holds no row and
    // no position, so the next run takes its columns and seeds it.
    assertFalse(f.tables.hasDataFiles(f.bronze));
    assertTrue(WriteSnapshotToDelta.committedRecord(f.tables, f.bronze).isEmpty());
    assertTrue(
        f.tables
            .domainMetadata(f.bronze, org.lakecdc.transforms.position.StreamPosition.BRONZE_DOMAIN)
            .isEmpty());

    // With --seedAllowMissingColumns the copy's missing columns are NULL: one row (0, NULL, op 0).
    f.run(f.config().withSeed(SeedCopy.parse(narrow, at(2).plusSeconds(30).toString(), true)));
    List<Row> seed = snapshotRows(bronzeRows(f));
    assertEquals(1, seed.size());
    assertEquals(0, seed.get(0).getInt32("order_id"));
    assertNull(seed.get(0).getString("status"));
    assertNull(seed.get(0).getDecimal("amount"));

    // A different seed of a seeded target is refused; nothing is written.
    long version = f.tables.version(f.bronze);
    IllegalArgumentException second =
        assertThrows(
            IllegalArgumentException.class,
            () -> f.run(seeded(f, full, at(1).plusSeconds(30).toString())));
    assertTrue(
        second.getMessage().contains("a second seed is refused")
            && second.getMessage().contains("already holds a seed of " + narrow),
        second.getMessage());
    assertEquals(version, f.tables.version(f.bronze));
  }

  @Test
  void c084ACopyOlderThanTheRetentionIsDataLoss() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t <= 2; t++) {
      f.db.transaction(at(t)).insert(ORDERS, order(t, "new", t + ".00")).commit();
    }
    Lsn purged = f.db.idle(at(2).plusSeconds(30));
    Lsn idle = f.db.idle(at(3));
    f.db.cleanup(CI, idle);
    String full = copy(f, "full", COPY_COLUMNS, copyOfSource(f));

    DataLossError old =
        assertThrows(DataLossError.class, () -> f.run(seeded(f, full, purged.toString())));
    assertEquals(
        "--seedAsOf "
            + purged
            + " = LSN "
            + purged
            + ": CDC no longer holds the changes right after it (min_lsn of dbo_orders is "
            + idle
            + "): the copy is older than the CDC retention; seed a newer copy",
        old.getMessage());
    assertFalse(f.tables.exists(f.bronze));

    DataLossError gone =
        assertThrows(DataLossError.class, () -> f.run(seeded(f, full, at(2).toString())));
    assertTrue(gone.getMessage().contains("no commit at or before"), gone.getMessage());
    assertFalse(f.tables.exists(f.bronze));
  }

  @Test
  void aCopyOfSeveralDataFilesIsReadFileByFileByThePipelineAndCommittedOnce() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    FakeTx.insert(f, at(0), 1, 2, 3, 4, 5, 6, 7);
    String copy = copy(f, "three-files", COPY_COLUMNS, copyOfSource(f).subList(0, 3));
    Schema schema = DeltaColumn.toBeamSchema(COPY_COLUMNS);
    for (List<List<Object>> part :
        List.of(copyOfSource(f).subList(3, 5), copyOfSource(f).subList(5, 7))) {
      List<Row> rows = new ArrayList<>();
      for (List<Object> r : part) {
        rows.add(Row.withSchema(schema).addValues(r).build());
      }
      f.tables.append(copy, schema, rows, null, 0, Map.of());
    }
    assertEquals(3, f.tables.scanFiles(copy).size(), "the copy has three data files");

    JobSummary seeded = f.run(seeded(f, copy, at(0).plusSeconds(30).toString()));
    assertEquals(7, seeded.snapshotRows());
    assertEquals(
        List.of(1, 2, 3, 4, 5, 6, 7),
        snapshotRows(bronzeRows(f)).stream().map(r -> r.getInt32("order_id")).sorted().toList());
    // One bronze commit holds a data file written from each of the copy's files.
    List<org.lakecdc.transforms.delta.CommitSummary> seedCommits =
        f.tables.history(f.bronze).stream()
            .filter(c -> (CI + "#snapshot").equals(c.txnAppId()))
            .toList();
    assertEquals(1, seedCommits.size());
    assertEquals(3, seedCommits.get(0).filesAdded());
    assertEquals(7, WriteSnapshotToDelta.committedRecord(f.tables, f.bronze).orElseThrow().rows());
  }

  /** Inserts of several new orders in one commit. */
  private static final class FakeTx {
    static Lsn insert(JobFixture f, Instant at, int... ids) {
      var tx = f.db.transaction(at);
      for (int id : ids) {
        tx.insert(ORDERS, order(id, "new", id + ".00"));
      }
      return tx.commit();
    }
  }
}
