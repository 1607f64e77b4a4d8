package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.StreamingOptions;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Committer rounds of three tables, three one-row batches each: the bounded committer with its
 * round's bronze commits on two threads, and the continuous committer, which makes the same rounds
 * from batches as they arrive. Either way every row and facts row lands once, one facts file per
 * round.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CommitterRoundTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");
  private static final List<String> TABLES = List.of("dbo.t0", "dbo.t1", "dbo.t2");

  /** Batches the continuous test's committer has fully committed (a hook of every target). */
  private static final CountDownLatch COMMITTED = new CountDownLatch(9);

  /** Set to stop the continuous test's reads. */
  private static final AtomicBoolean STOP = new AtomicBoolean();

  @TempDir Path dir;

  private final DeltaTables tables = HadoopConf.empty().tables();

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  /**
   * Three tables, three transactions each inserting one row (id 1, 2, 3) into every table; the
   * tables' writes, each read one source commit per batch ({@code read} adds to the read).
   */
  private List<TableWrite> writes(UnaryOperator<MssqlCdcIO.Read> read, CommitHook hook) {
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
    tables.createIfAbsent(delta("facts"), FactsTable.definition());
    tables.createIfAbsent(delta("control"), ControlTable.definition());
    List<TableWrite> writes = new ArrayList<>();
    for (String table : TABLES) {
      String ci = table.replace('.', '_');
      MssqlCdcIO.Read each =
          read.apply(
              MssqlCdcIO.read()
                  .withSourceConfiguration(
                      SourceConfiguration.create(ci).withClientFactory(db.clientFactory()))
                  .withMaxCommitsPerBatch(1));
      String bronze = delta("bronze_" + ci);
      tables.createIfAbsent(bronze, BronzeTable.definition(each.outputSchema()));
      StreamPosition start =
          new StreamPosition(ci + "-v1", 0, -1, Lsn.ZERO, null, ci)
              .ofTarget(bronze, tables.tableId(bronze));
      DeltaTarget target =
          new DeltaTarget(
              bronze,
              delta("facts"),
              delta("control"),
              start,
              Granularity.HOUR,
              T0,
              null,
              HadoopConf.empty(),
              hook);
      writes.add(new TableWrite(each, target, each.outputSchema()));
    }
    return writes;
  }

  /**
   * Every row of every table and every batch's facts row once, one facts file per round, the
   * verdicts moved in round 1's one control rewrite.
   */
  private void assertThreeRoundsOfThreeTables() {
    List<String> facts = new ArrayList<>();
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        facts.add(
            r.getString(FactsTable.APP_ID)
                + ":"
                + r.getInt64(FactsTable.BATCH_ID)
                + ":"
                + r.getInt64(FactsTable.ROWS));
      }
    }
    facts.sort(null);
    assertEquals(
        List.of(
            "dbo_t0-v1:0:1",
            "dbo_t0-v1:1:1",
            "dbo_t0-v1:2:1",
            "dbo_t1-v1:0:1",
            "dbo_t1-v1:1:1",
            "dbo_t1-v1:2:1",
            "dbo_t2-v1:0:1",
            "dbo_t2-v1:1:1",
            "dbo_t2-v1:2:1"),
        facts);
    assertEquals(3, tables.scanFiles(delta("facts")).size(), "one facts file per round");
    // Control created at versions 0 and 1; round 1 moves the three verdicts in one rewrite.
    assertEquals(2, tables.version(delta("control")));
    Finalization verdicts = new Finalization(tables, delta("control"), Clock.systemUTC());
    for (String table : TABLES) {
      String ci = table.replace('.', '_');
      String bronze = delta("bronze_" + ci);
      List<String> rows = new ArrayList<>();
      for (Map<String, Object> r : tables.scan(bronze)) {
        rows.add(r.get("id") + ":" + r.get("v") + ":" + r.get(MetadataColumns.BATCH_ID));
      }
      rows.sort(null);
      assertEquals(List.of("1:row 1:0", "2:row 2:1", "3:row 3:2"), rows, bronze);
      // Bronze created at versions 0 and 1; one commit per batch with its transaction id.
      assertEquals(4, tables.version(bronze));
      assertEquals(2L, tables.latestTransactionVersion(bronze, ci + "-v1").getAsLong());
      assertEquals(LocalDateTime.of(2026, 9, 28, 13, 0), verdicts.verdict(bronze).orElseThrow());
    }
  }

  @Test
  void boundedRoundsOnTwoCommitThreadsWriteEveryRowAndFactsRowOnce() {
    List<TableWrite> writes = writes(read -> read, null);
    Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
    p.apply(WriteChangesToDelta.fromAll(writes).withCommitThreads(2));
    assertEquals(PipelineResult.State.DONE, p.run().waitUntilFinish());

    assertThreeRoundsOfThreeTables();
  }

  @Test
  void continuousRoundsCommitTheBatchesOfTheThreeTablesThatArriveTogether() throws Exception {
    List<TableWrite> writes =
        writes(
            read ->
                read.withContinuous(true)
                    .withPollInterval(org.joda.time.Duration.millis(100))
                    .withStopCondition(() -> STOP.get()),
            batch -> COMMITTED.countDown());
    DirectOptions options = PipelineOptionsFactory.as(DirectOptions.class);
    options.setBlockOnRun(false);
    options.as(StreamingOptions.class).setStreaming(true);
    Pipeline p = Pipeline.create(options);
    // A round waits up to a minute for the tables whose batch has not arrived: the rounds here
    // are made when all three tables' next batches are there, never by the wait.
    p.apply(
        WriteChangeStreamToDelta.fromAll(writes)
            .withCommitThreads(2)
            .withRoundWait(Duration.ofMinutes(1)));
    PipelineResult result = p.run();
    assertTrue(COMMITTED.await(2, TimeUnit.MINUTES), "nine batches committed");
    STOP.set(true);
    assertEquals(PipelineResult.State.DONE, result.waitUntilFinish());

    assertThreeRoundsOfThreeTables();
  }
}
