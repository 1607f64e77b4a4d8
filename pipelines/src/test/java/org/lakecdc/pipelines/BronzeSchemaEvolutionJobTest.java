package org.lakecdc.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.TableProperties;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The job makes bronze take a later run's change schema before it writes (docs/sql-server.md
 * "Switching to a new capture instance", docs/tables.md "Bronze"): columns a newer capture instance
 * adds are added (C043), a switch event names the columns the newer instance no longer captures
 * (C033), a wider type is widened only with Delta type widening on (C054), and a name Delta refuses
 * without column mapping fails the run (C055).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BronzeSchemaEvolutionJobTest {
  private static final String V2 = "dbo_orders_v2";

  @TempDir Path dir;

  private static JobConfig config(
      JobFixture f, String captureInstance, String appId, boolean bootstrap) {
    return JobConfig.builder(f.db.clientFactory(), captureInstance, f.bronze, f.facts, f.control)
        .appId(appId)
        .bootstrap(bootstrap)
        .maxCommitsPerBatch(4)
        .build();
  }

  /**
   * Runs the job; when the run stops with {@link SchemaChangedError} (a reader that refuses to read
   * past a newer instance's start with columns the inferred schema lacks asks for a restart to
   * re-infer the union), runs it once more, as an operator restarts it.
   */
  private static JobSummary runRestartingOnSchemaChange(JobFixture f, JobConfig config) {
    try {
      return f.run(config);
    } catch (RuntimeException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof SchemaChangedError) {
          return f.run(config);
        }
      }
      throw e;
    }
  }

  private static Map<String, Object> row(Object... keysAndValues) {
    Map<String, Object> row = new HashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      row.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return row;
  }

  private List<Row> bronzeRows(JobFixture f) {
    return f.tables.scan(f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns()));
  }

  /** Snapshots in bronze (distinct {@code _snapshot} values) and bootstrap facts events. */
  private static long snapshots(JobFixture f, List<Row> bronze) {
    long inBronze =
        bronze.stream()
            .map(r -> r.getString(MetadataColumns.SNAPSHOT))
            .filter(Objects::nonNull)
            .distinct()
            .count();
    long events =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> FactsTable.EVENT_BOOTSTRAP.equals(r.getString(FactsTable.EVENT)))
            .count();
    assertEquals(inBronze, events, "one bootstrap event per snapshot");
    return inBronze;
  }

  /**
   * C043's source up to the newer instance's first commit: CI captures order_id and status; orders
   * 0..2 and the bootstrap run; then ADD note, an update of order 1 that CI captures without note,
   * {@code dbo_orders_v2} with note, and its start: order 3 with note "gift".
   */
  private record Switch(JobFixture f, Lsn ddl, Lsn update, Lsn start) {}

  private Switch c043Switch(String appId) {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS, CaptureOptions.defaults().withCapturedColumns("order_id", "status"));
    f.db
        .transaction(at(0))
        .insert(ORDERS, row("order_id", 0, "status", "new"))
        .insert(ORDERS, row("order_id", 1, "status", "new"))
        .insert(ORDERS, row("order_id", 2, "status", "new"))
        .commit();
    JobSummary bootstrap = f.run(config(f, CI, appId, true));
    assertEquals(3, bootstrap.snapshotRows());
    Lsn ddl = f.db.ddl(ORDERS, "ALTER TABLE [dbo].[orders] ADD [note] varchar(20) NULL");
    Lsn update =
        f.db.transaction(at(5)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    f.db.enableCdc(
        ORDERS,
        CaptureOptions.defaults().withName(V2).withCapturedColumns("order_id", "status", "note"));
    Lsn start =
        f.db
            .transaction(at(6))
            .insert(ORDERS, row("order_id", 3, "status", "new", "note", "gift"))
            .commit();
    return new Switch(f, ddl, update, start);
  }

  @Test
  void c043ASwitchAddsTheNewColumnToBronzeWithItsEventsAndARerunTakesNoNewSnapshot() {
    Switch s = c043Switch("switch-v1");
    JobFixture f = s.f();
    List<String> before =
        f.tables.describe(f.bronze).columns().stream().map(DeltaColumn::name).toList();
    assertTrue(!before.contains("note"), "bronze was created without note: " + before);

    runRestartingOnSchemaChange(f, config(f, CI, "switch-v1", true));

    assertThat(
        f.lastOutput, containsString("Added column(s) note to bronze " + f.bronze + " (version"));
    DeltaColumn note = f.tables.describe(f.bronze).column("note").orElseThrow();
    assertEquals(OutputType.STRING, note.type());
    assertTrue(note.nullable());
    List<Row> bronze = bronzeRows(f);
    Row updated =
        bronze.stream()
            .filter(r -> r.getInt32("order_id") == 1 && r.getInt32(MetadataColumns.OPERATION) == 4)
            .findFirst()
            .orElseThrow();
    assertEquals(CI, updated.getString(MetadataColumns.CAPTURE_INSTANCE));
    assertEquals(s.update().toString(), updated.getString(MetadataColumns.START_LSN));
    assertNull(updated.getString("note"));
    Row inserted =
        bronze.stream()
            .filter(r -> r.getInt32("order_id") == 3 && r.getInt32(MetadataColumns.OPERATION) == 2)
            .findFirst()
            .orElseThrow();
    assertEquals(V2, inserted.getString(MetadataColumns.CAPTURE_INSTANCE));
    assertEquals("gift", inserted.getString("note"));
    assertEquals(s.start().toString(), inserted.getString(MetadataColumns.START_LSN));
    assertTrue(
        bronze.stream()
            .filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0)
            .allMatch(r -> r.getString("note") == null),
        "the snapshot rows, written before, read note as NULL");

    Map<String, Row> byEvent = new TreeMap<>();
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) != null && r.getInt64(FactsTable.BATCH_ID) != null) {
        byEvent.put(r.getString(FactsTable.EVENT), r);
      }
    }
    Row schemaChange = byEvent.get(FactsTable.EVENT_SCHEMA_CHANGE);
    assertNotNull(schemaChange, "events with a batch id: " + byEvent.keySet());
    assertEquals(s.ddl().toString(), schemaChange.getString(FactsTable.MIN_LSN));
    assertThat(schemaChange.getString(FactsTable.DETAIL), containsString("note"));
    Row switched = byEvent.get(FactsTable.EVENT_CAPTURE_INSTANCE_SWITCHED);
    assertNotNull(switched, "events with a batch id: " + byEvent.keySet());
    assertEquals("dbo_orders -> dbo_orders_v2", switched.getString(FactsTable.DETAIL));
    assertEquals(s.start().toString(), switched.getString(FactsTable.MIN_LSN));
    assertEquals(1, snapshots(f, bronze));

    // Configured under the newer instance's name: the bootstrap is found, no new snapshot.
    f.run(config(f, V2, "switch-v1", true));
    assertEquals(1, snapshots(f, bronzeRows(f)));

    // The DBA drops the old instance; a delete after it is read from v2 only.
    f.db.disableCdc(CI);
    f.db.transaction(at(7)).delete(ORDERS, List.of(0)).commit();
    f.run(config(f, V2, "switch-v1", true));
    List<Row> after = bronzeRows(f);
    assertEquals(1, snapshots(f, after));
    List<Row> deletes =
        after.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 1).toList();
    assertEquals(1, deletes.size(), "exactly one delete row");
    assertEquals(0, deletes.get(0).getInt32("order_id"));
    assertEquals(V2, deletes.get(0).getString(MetadataColumns.CAPTURE_INSTANCE));
  }

  @Test
  void c043ATargetWrittenUnderTheOlderInstancesDefaultAppIdContinuesUnderTheNewerName() {
    // The command line's default app id is the capture instance: after the switch the job is
    // configured as dbo_orders_v2, whose default app id differs from the target's.
    Switch s = c043Switch(CI);
    JobFixture f = s.f();
    runRestartingOnSchemaChange(f, config(f, CI, CI, true));
    f.db.disableCdc(CI);
    f.db.transaction(at(7)).delete(ORDERS, List.of(0)).commit();

    JobSummary rerun = f.run(config(f, V2, V2, true));

    assertThat(
        f.lastOutput,
        containsString(
            "Target "
                + f.bronze
                + " is written under app id 'dbo_orders', from a capture instance of the same"
                + " table as dbo_orders_v2: continuing under that app id"));
    assertEquals(1, rerun.batches());
    assertEquals(CI, rerun.position().orElseThrow().appId());
    List<Row> after = bronzeRows(f);
    assertEquals(1, snapshots(f, after));
    assertEquals(1, after.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 1).count());
  }

  @Test
  void anExplicitAppIdOfAnotherTargetIsStillRefused() {
    Switch s = c043Switch("switch-v1");
    JobFixture f = s.f();

    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> f.run(config(f, V2, "other", true)));

    assertThat(e.getMessage(), containsString("is written by app id 'switch-v1', not 'other'"));
  }

  @Test
  void c033TheSwitchEventNamesTheColumnsTheNewerInstanceNoLongerCaptures() {
    JobFixture f = new JobFixture(dir);
    f.db.addColumn(ORDERS, "note", SqlServerType.parse("varchar(20)"));
    f.db.enableCdc(
        ORDERS,
        CaptureOptions.defaults()
            .withCapturedColumns("order_id", "status", "amount", "updated_at")
            .withCreateTime(at(0)));
    for (int i = 0; i < 10; i++) {
      if (i == 5) {
        f.db.enableCdc(
            ORDERS,
            CaptureOptions.defaults()
                .withName(V2)
                .withCapturedColumns("order_id", "status", "amount", "note")
                .withCreateTime(at(5)));
      }
      f.db
          .transaction(at(i))
          .insert(
              ORDERS,
              row(
                  "order_id",
                  i,
                  "status",
                  "new",
                  "amount",
                  new BigDecimal(i + ".00"),
                  "updated_at",
                  LocalDateTime.ofInstant(at(i), ZoneOffset.UTC),
                  "note",
                  "n" + i))
          .commit();
    }

    f.run(config(f, CI, CI, false));

    Map<Integer, String> updatedAt = new TreeMap<>();
    Map<Integer, String> notes = new TreeMap<>();
    for (Row r : bronzeRows(f)) {
      int id = r.getInt32("order_id");
      updatedAt.put(id, Objects.toString(r.getValue("updated_at")));
      notes.put(id, String.valueOf(r.getString("note")));
      assertEquals(id < 5 ? CI : V2, r.getString(MetadataColumns.CAPTURE_INSTANCE), "order " + id);
    }
    for (int i = 0; i < 10; i++) {
      assertEquals(i < 5, !updatedAt.get(i).equals("null"), "updated_at of order " + i);
      assertEquals(i < 5 ? "null" : "n" + i, notes.get(i), "note of order " + i);
    }
    List<String> switches =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(
                r ->
                    FactsTable.EVENT_CAPTURE_INSTANCE_SWITCHED.equals(
                        r.getString(FactsTable.EVENT)))
            .map(r -> r.getString(FactsTable.DETAIL))
            .toList();
    assertEquals(
        List.of("dbo_orders -> dbo_orders_v2; no longer captured, read as NULL: updated_at"),
        switches);
  }

  @Test
  void c054AWiderTypeFailsTheRunBeforeAnyWriteUntilTypeWideningIsOnThenTheColumnIsWidened() {
    JobFixture f = new JobFixture(dir);
    f.db.alterColumn(ORDERS, "amount", SqlServerType.parse("decimal(9,2)"));
    f.db.enableCdc(ORDERS);
    f.db
        .transaction(at(0))
        .insert(ORDERS, row("order_id", 0, "status", "new", "amount", new BigDecimal("1.25")))
        .insert(ORDERS, row("order_id", 1, "status", "new", "amount", new BigDecimal("2.50")))
        .commit();
    f.run(config(f, CI, CI, true));
    assertEquals(
        OutputType.decimal(9, 2),
        f.tables.describe(f.bronze).column("amount").orElseThrow().type());
    f.db.alterColumn(ORDERS, "amount", SqlServerType.parse("decimal(18,4)"));
    f.db
        .transaction(at(2))
        .insert(ORDERS, row("order_id", 2, "status", "new", "amount", new BigDecimal("1.2345")))
        .commit();
    long bronzeVersion = f.tables.version(f.bronze);
    long factsVersion = f.tables.version(f.facts);

    SchemaChangedError e =
        assertThrows(SchemaChangedError.class, () -> f.run(config(f, CI, CI, true)));

    assertThat(
        e.getMessage(),
        containsString(
            "holds column 'amount' as DECIMAL(9,2), which cannot take DECIMAL(18,4) unchanged"));
    assertThat(
        e.getMessage(),
        containsString(
            "ALTER TABLE delta.`"
                + f.bronze
                + "` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"));
    assertEquals(bronzeVersion, f.tables.version(f.bronze), "nothing written to bronze");
    assertEquals(factsVersion, f.tables.version(f.facts), "nothing written to facts");

    f.tables.setTableProperties(f.bronze, Map.of(TableProperties.ENABLE_TYPE_WIDENING, "true"));
    JobSummary widened = f.run(config(f, CI, CI, true));

    assertThat(
        f.lastOutput,
        containsString(
            "Widened column(s) amount DECIMAL(9,2) -> DECIMAL(18,4) in bronze " + f.bronze));
    assertEquals(1, widened.rows());
    assertEquals(
        OutputType.decimal(18, 4),
        f.tables.describe(f.bronze).column("amount").orElseThrow().type());
    Map<Integer, BigDecimal> amounts = new TreeMap<>();
    for (Row r : bronzeRows(f)) {
      amounts.put(r.getInt32("order_id"), r.getDecimal("amount"));
    }
    assertEquals(
        Map.of(
            0, new BigDecimal("1.2500"), 1, new BigDecimal("2.5000"), 2, new BigDecimal("1.2345")),
        amounts);
  }

  @Test
  void c055ANewColumnNamedAsDeltaRefusesWithoutColumnMappingFailsTheRunBeforeTheWrite() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS, CaptureOptions.defaults().withCapturedColumns("order_id"));
    f.db.transaction(at(0)).insert(ORDERS, row("order_id", 0)).commit();
    f.run(config(f, CI, CI, false));
    f.db.addColumn(ORDERS, "Qty (kg)", SqlServerType.parse("decimal(9,3)"));
    f.db.enableCdc(
        ORDERS,
        CaptureOptions.defaults()
            .withName(V2)
            .withCapturedColumns("order_id", "status", "Qty (kg)"));
    f.db
        .transaction(at(2))
        .insert(ORDERS, row("order_id", 1, "status", "new", "Qty (kg)", new BigDecimal("1.5")))
        .commit();
    long bronzeVersion = f.tables.version(f.bronze);

    SchemaChangedError e =
        assertThrows(SchemaChangedError.class, () -> f.run(config(f, CI, CI, false)));

    assertThat(e.getMessage(), containsString("column(s) 'Qty (kg)' only"));
    assertThat(e.getMessage(), containsString("column mapping is off"));
    assertThat(e.getMessage(), containsString("cannot write tables with column mapping"));
    assertEquals(
        List.of(
            "_capture_instance",
            "_start_lsn",
            "_seqval",
            "_operation",
            "_command_id",
            "_commit_ts",
            "order_id",
            "_batch_id",
            "_snapshot",
            "_chunk"),
        f.tables.describe(f.bronze).columns().stream().map(DeltaColumn::name).toList(),
        "bronze's schema is unchanged");
    assertEquals(bronzeVersion, f.tables.version(f.bronze));
  }
}
