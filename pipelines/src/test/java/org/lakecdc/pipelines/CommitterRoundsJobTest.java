package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Finalization;

/**
 * Many tables' batches committed in committer rounds: each round is the next batch of every table,
 * their bronze commits and one facts commit; a crash between a round's bronze commits and its facts
 * commit loses and duplicates nothing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CommitterRoundsJobTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");
  private static final List<String> TABLES = List.of("dbo.t0", "dbo.t1", "dbo.t2");

  /** Every batch's facts row, each once: three tables, batches 0..2, one row each. */
  private static final List<String> EVERY_BATCH =
      List.of(
          "dbo_t0-v1:0:1",
          "dbo_t0-v1:1:1",
          "dbo_t0-v1:2:1",
          "dbo_t1-v1:0:1",
          "dbo_t1-v1:1:1",
          "dbo_t1-v1:2:1",
          "dbo_t2-v1:0:1",
          "dbo_t2-v1:1:1",
          "dbo_t2-v1:2:1");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  /** Three tables; three transactions, each inserting one row (id 1, 2, 3) into every table. */
  private FakeSqlServer source() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    for (String table : TABLES) {
      db.createTable(
          table,
          List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("v", "varchar(20)")),
          List.of("id"));
      db.enableCdc(table);
    }
    for (int id = 1; id <= 3; id++) {
      FakeSqlServer.Transaction tx = db.transaction(T0.plusSeconds(60L * id));
      for (String table : TABLES) {
        tx.insert(table, Map.of("id", id, "v", "row " + id));
      }
      tx.commit();
    }
    return db;
  }

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  /** One batch per source commit, each table under its own app id. */
  private List<JobConfig> configs(FakeSqlServer db) {
    List<JobConfig> configs = new ArrayList<>();
    for (String table : TABLES) {
      String ci = table.replace('.', '_');
      configs.add(
          JobConfig.builder(
                  db.clientFactory(), ci, delta("bronze_" + ci), delta("facts"), delta("control"))
              .appId(ci + "-v1")
              .bootstrap(false)
              .maxCommitsPerBatch(1)
              .build());
    }
    return configs;
  }

  private static List<CdcToDeltaJob.TableOutcome> runAll(List<JobConfig> configs) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    return CdcToDeltaJob.runAll(
        configs,
        Runners.options(Runners.DIRECT),
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        () -> {});
  }

  /** The facts table's batch rows as "app id:batch:rows", sorted. */
  private List<String> factBatches() {
    List<String> out = new ArrayList<>();
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        out.add(
            r.getString(FactsTable.APP_ID)
                + ":"
                + r.getInt64(FactsTable.BATCH_ID)
                + ":"
                + r.getInt64(FactsTable.ROWS));
      }
    }
    out.sort(null);
    return out;
  }

  /** Each table's bronze row count, in table order. */
  private List<Long> bronzeRows() {
    List<Long> out = new ArrayList<>();
    for (String table : TABLES) {
      out.add((long) tables.scan(delta("bronze_" + table.replace('.', '_'))).size());
    }
    return out;
  }

  private int factsFiles() {
    return tables.scanFiles(delta("facts")).size();
  }

  @Test
  void threeTablesThreeBatchesEachTakeThreeFactsCommitsOneFilePerRound() {
    runAll(configs(source()));

    assertEquals(EVERY_BATCH, factBatches());
    assertEquals(List.of(3L, 3L, 3L), bronzeRows());
    assertEquals(3, factsFiles(), "one facts file per round, not one per batch");
    // The three verdicts move in round 1 (to 13:00, the hour of every commit), in one rewrite of
    // the control table created at version 1; rounds 2 and 3 do not move them.
    assertEquals(2, tables.version(delta("control")));
    Finalization verdicts = new Finalization(tables, delta("control"), java.time.Clock.systemUTC());
    for (String table : TABLES) {
      assertEquals(
          LocalDateTime.of(2026, 9, 28, 13, 0),
          verdicts.verdict(delta("bronze_" + table.replace('.', '_'))).orElseThrow());
    }
    for (String ci : List.of("dbo_t0", "dbo_t1", "dbo_t2")) {
      String factsAppId = ci + "-v1#facts@" + tables.tableId(delta("bronze_" + ci));
      assertEquals(2L, tables.latestTransactionVersion(delta("facts"), factsAppId).getAsLong());
    }
  }

  @Test
  void aCrashBetweenARoundsBronzeCommitsAndItsFactsCommitLosesAndDuplicatesNothing() {
    FakeSqlServer db = source();
    List<JobConfig> crashing = new ArrayList<>(configs(db));
    // The last table of round 2 (batch 1) stops after its bronze commit: the two tables before it
    // in the round have their batch 1 in bronze too, and the round's facts commit never happens.
    crashing.set(2, crashing.get(2).withCrash(CrashPoint.AFTER_BRONZE_COMMIT, 1));
    RuntimeException crash = assertThrows(RuntimeException.class, () -> runAll(crashing));
    assertTrue(
        String.valueOf(crash).contains("SimulatedCrash")
            || String.valueOf(crash.getCause()).contains("SimulatedCrash"),
        String.valueOf(crash));

    assertEquals(
        List.of("dbo_t0-v1:0:1", "dbo_t1-v1:0:1", "dbo_t2-v1:0:1"),
        factBatches(),
        "round 1's facts only");
    assertEquals(List.of(2L, 2L, 2L), bronzeRows(), "round 2's bronze commits all landed");
    assertEquals(1, factsFiles());

    runAll(configs(db));

    assertEquals(EVERY_BATCH, factBatches(), "every batch's facts row exactly once");
    assertEquals(List.of(3L, 3L, 3L), bronzeRows(), "every change exactly once");
    // Round 1's file, batch 1's three rows written back one by one, the rerun's one round.
    assertEquals(5, factsFiles());
  }
}
