package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.beam.sdk.Pipeline.PipelineExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.CommitSummary;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.TableInfo;
import org.lakecdc.transforms.delta.TableProperties;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The main job end to end on the DirectRunner: bronze, facts and the verdict, exactly once across
 * reruns and crashes (docs/scenarios.md sections 1, 8 and 9 as they concern the sink).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CdcToDeltaJobTest {
  @TempDir Path dir;

  private static List<String> withoutBatch(List<String> bronze) {
    return bronze.stream()
        .map(s -> s.substring(0, s.lastIndexOf('/')))
        .sorted()
        .collect(Collectors.toList());
  }

  @Test
  void writesEveryChangeOnceOneFactsRowPerBatchAndTheVerdict() {
    JobFixture f = JobFixture.history(dir);
    JobSummary summary = f.run();

    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
    assertEquals(28, f.bronzeChanges().size());
    // 11 commits of cdc.lsn_time_mapping, 4 a batch: ends at the 4th, 8th and 11th entry.
    assertEquals(
        List.of(
            "0:12:0x0000002A000001000031",
            "1:12:0x0000002A000001000071",
            "2:4:0x0000002A0000010000A1"),
        f.factBatches());
    assertEquals(3, summary.batches());
    assertEquals(28, summary.rows());
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        new Finalization(f.tables, f.control, java.time.Clock.systemUTC())
            .verdict(f.bronze)
            .orElseThrow(),
        "the idle entry at 15:55 moved the verdict to 15:00 (its hour excluded)");
    StreamPosition position = summary.position().orElseThrow();
    assertEquals(2, position.batchId());
    assertEquals(Lsn.parse("0x0000002A0000010000A1"), position.endLsn());
    assertEquals(Instant.parse("2026-09-28T15:55:00Z"), position.endCommitTime());
  }

  @Test
  void eachBronzeVersionHoldsOneBatchAndABatchWithoutRowsWritesNoBronzeCommit() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    f.insertCommit(0, 3);
    f.insertCommit(1, 3);
    f.db.idle(at(125));
    f.run(f.config().toBuilder().maxCommitsPerBatch(1).build());
    List<CommitSummary> history = f.tables.history(f.bronze);
    long dataCommits = history.stream().filter(c -> c.operation().equals("WRITE")).count();
    assertEquals(2, dataCommits, "two batches with rows, two bronze commits: " + history);
    assertEquals(
        List.of(
            "0:3:0x0000002A000001000001",
            "1:3:0x0000002A000001000011",
            "2:0:0x0000002A000001000021"),
        f.factBatches(),
        "the idle entry's batch has a facts row but no bronze commit");
    List<String> bronze = f.bronzeChanges();
    assertTrue(bronze.subList(0, 3).stream().allMatch(s -> s.endsWith("/0")));
    assertTrue(bronze.subList(3, 6).stream().allMatch(s -> s.endsWith("/1")));
  }

  @Test
  void aSecondRunWritesNoRowsAndRecordsThatNothingWasNew() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    long bronzeVersion = f.tables.version(f.bronze);
    JobSummary second = f.run();
    assertEquals(0, second.batches());
    assertEquals(bronzeVersion, f.tables.version(f.bronze));
    assertEquals(List.of("nothing_new"), f.factEvents());
    assertEquals(3, f.factBatches().size());
    assertTrue(
        f.lastOutput.startsWith("Nothing new: max_lsn 0x0000002A0000010000A1"), f.lastOutput);
  }

  @Test
  void c002ARerunReadsOnlyTheCommitsAfterThePosition() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 3; t++) {
      f.insertCommit(t, 3);
    }
    f.run();
    f.db
        .transaction(at(60))
        .insert(ORDERS, order(900, "new", "9.00"))
        .insert(ORDERS, order(901, "new", "9.01"))
        .commit();
    JobSummary second = f.run();
    assertEquals(1, second.batches());
    assertEquals(2, second.rows());
    assertEquals(11, f.bronzeChanges().size());
    assertEquals(
        List.of("0:9:0x0000002A000001000021", "1:2:0x0000002A000001000031"), f.factBatches());
  }

  @Test
  void c003AnIdleEntryAdvancesThePositionAndTheVerdictWithoutData() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    f.insertCommit(0, 3);
    f.insertCommit(1, 3);
    f.run();
    Finalization verdicts = new Finalization(f.tables, f.control, java.time.Clock.systemUTC());
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 0), verdicts.verdict(f.bronze).orElseThrow());
    f.db.idle(at(125));
    JobSummary second = f.run();
    assertEquals(1, second.batches());
    assertEquals(0, second.rows());
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 0), verdicts.verdict(f.bronze).orElseThrow());
    assertEquals(6, f.bronzeChanges().size());
  }

  @ParameterizedTest
  @EnumSource(
      value = CrashPoint.class,
      names = {"AFTER_DATA_FILES", "AFTER_BRONZE_COMMIT", "AFTER_FACTS_COMMIT"})
  void aCrashAtAnyStepOfABatchLosesNothingAndDuplicatesNothing(CrashPoint point) {
    JobFixture f = JobFixture.history(dir);
    PipelineExecutionException crash =
        assertThrows(PipelineExecutionException.class, () -> f.runCrashing(point, 1));
    assertInstanceOf(CrashPoint.SimulatedCrash.class, crash.getCause());

    Finalization verdicts = new Finalization(f.tables, f.control, java.time.Clock.systemUTC());
    LocalDateTime afterCrash = verdicts.verdict(f.bronze).orElseThrow();
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 0),
        afterCrash,
        "the verdict is batch 0's: never ahead of the data");
    f.run();

    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()), "every change exactly once");
    assertEquals(
        List.of(
            "0:12:0x0000002A000001000031",
            "1:12:0x0000002A000001000071",
            "2:4:0x0000002A0000010000A1"),
        f.factBatches(),
        "one facts row per batch");
    LocalDateTime finalVerdict = verdicts.verdict(f.bronze).orElseThrow();
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 0), finalVerdict);
    assertFalse(finalVerdict.isBefore(afterCrash), "the verdict never moves backwards");
  }

  @Test
  void aTargetWrittenByAnotherAppIdIsRefused() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    JobConfig c = f.config();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> f.run(c.toBuilder().appId("other").build()));
    assertTrue(
        e.getMessage()
            .startsWith("Target " + f.bronze + " is written by app id 'dbo_orders', not 'other'"),
        e.getMessage());
  }

  @Test
  void c123TablesAreCreatedTypedCommentedAndStamped() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    TableInfo bronze = f.tables.describe(f.bronze);
    assertEquals("bronze", bronze.properties().get(TableProperties.TABLE_KIND));
    assertEquals("1", bronze.properties().get(TableProperties.SCHEMA_VERSION));
    assertTrue(bronze.description().startsWith("Append-only SQL Server CDC change log"));
    List<String> names = bronze.columns().stream().map(DeltaColumn::name).toList();
    assertEquals(
        List.of(
            "_capture_instance",
            "_start_lsn",
            "_seqval",
            "_operation",
            "_command_id",
            "_commit_ts",
            "order_id",
            "status",
            "amount",
            "updated_at",
            "_batch_id",
            "_snapshot",
            "_chunk"),
        names);
    for (DeltaColumn column : bronze.columns()) {
      boolean metadata = column.name().startsWith("_");
      assertEquals(metadata, column.comment() != null, column.name());
    }
    assertEquals("DECIMAL(18,2)", bronze.column("amount").orElseThrow().type().toString());
    TableInfo facts = f.tables.describe(f.facts);
    assertEquals("facts", facts.properties().get(TableProperties.TABLE_KIND));
    assertEquals(29, facts.columns().size());
    assertTrue(facts.columns().stream().allMatch(c -> c.comment() != null));
    TableInfo control = f.tables.describe(f.control);
    assertEquals("control", control.properties().get(TableProperties.TABLE_KIND));
    assertTrue(control.columns().stream().allMatch(c -> c.comment() != null));
  }

  @Test
  void c124SchemaChangesAndACaptureInstanceSwitchBecomeEventRowsOfTheirBatch() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    f.insertCommit(0, 1);
    f.insertCommit(1, 1);
    Lsn ddl =
        f.db.addColumn(
            ORDERS, "note", org.lakecdc.io.mssqlcdc.schema.SqlServerType.parse("varchar(20)"));
    f.db.enableCdc(
        ORDERS,
        org.lakecdc.io.mssqlcdc.fake.CaptureOptions.defaults()
            .withName("dbo_orders_v2")
            .withCapturedColumns(List.of("order_id", "status", "amount", "updated_at", "note")));
    Map<String, Object> noted = new java.util.HashMap<>(order(500, "new", "5.00"));
    noted.put("note", "gift");
    Lsn s = f.db.transaction(at(5)).insert(ORDERS, noted).commit();
    f.insertCommit(6, 1);
    f.run();

    List<org.apache.beam.sdk.values.Row> events =
        f.tables.scan(f.facts, org.lakecdc.transforms.facts.FactsTable.SCHEMA).stream()
            .filter(r -> r.getString("event") != null)
            .sorted(java.util.Comparator.comparing(r -> r.getString("end_lsn")))
            .toList();
    assertEquals(
        List.of("schema_change", "capture_instance_switched"),
        events.stream().map(r -> r.getString("event")).toList());
    assertEquals(ddl.toString(), events.get(0).getString("end_lsn"));
    assertEquals(
        "ALTER TABLE [dbo].[orders] ADD [note] varchar(20)", events.get(0).getString("detail"));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 51),
        events.get(0).getLogicalTypeValue("end_commit_ts", LocalDateTime.class),
        "a DDL LSN has no commit of its own: the commit time of the last commit before it");
    assertEquals(s.toString(), events.get(1).getString("end_lsn"));
    assertEquals("dbo_orders -> dbo_orders_v2", events.get(1).getString("detail"));
    assertEquals(0L, events.get(1).getInt64("rows"));
    assertEquals(
        events.get(0).getInt64("batch_id"),
        f.factBatches().stream()
            .map(b -> Long.parseLong(b.substring(0, b.indexOf(':'))))
            .filter(b -> b.equals(events.get(0).getInt64("batch_id")))
            .findFirst()
            .orElseThrow(),
        "the event rows carry their batch's id");

    List<org.apache.beam.sdk.values.Row> bronze =
        f.tables.scan(f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns()));
    Map<Integer, String> instanceByOrder = new java.util.TreeMap<>();
    Map<Integer, String> noteByOrder = new java.util.TreeMap<>();
    for (org.apache.beam.sdk.values.Row r : bronze) {
      instanceByOrder.put(r.getInt32("order_id"), r.getString("_capture_instance"));
      noteByOrder.put(r.getInt32("order_id"), String.valueOf(r.getString("note")));
    }
    assertEquals(
        Map.of(0, "dbo_orders", 100, "dbo_orders", 500, "dbo_orders_v2", 600, "dbo_orders_v2"),
        instanceByOrder);
    assertEquals(Map.of(0, "null", 100, "null", 500, "gift", 600, "null"), noteByOrder);
  }

  @Test
  void aStartingLsnPastMaxLsnOnANewTargetIsRefusedBeforeAnyTableIsCreated() {
    JobFixture f = JobFixture.history(dir);
    JobConfig c = f.config();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                f.run(
                    c.toBuilder()
                        .startingLsn(
                            org.lakecdc.io.mssqlcdc.read.StartingLsn.parse(
                                "0x0000002A000001009999"))
                        .build()));
    assertTrue(e.getMessage().startsWith("startingLsn 0x0000002A000001009999 is after max_lsn"));
    assertFalse(f.tables.exists(f.bronze));
    assertFalse(f.tables.exists(f.facts));
    assertFalse(f.tables.exists(f.control));
  }
}
