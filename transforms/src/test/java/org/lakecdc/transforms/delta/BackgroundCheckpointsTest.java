package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Checkpoints written by the tables' background threads after the commit returned ({@link
 * CheckpointTiming#IN_BACKGROUND}), as a committer's bronze commits write them.
 */
class BackgroundCheckpointsTest {
  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, "Id"),
          DeltaColumn.nullable("note", OutputType.STRING, "Note"));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  @TempDir Path dir;

  /** Commits batch {@code batch} of app id {@code app} (one row, id = batch) as {@code timing}. */
  private static CommitResult commitBatch(
      DeltaTables tables, String path, long batch, CheckpointTiming timing) {
    Row row = Row.withSchema(SCHEMA).addValues(batch, "batch " + batch).build();
    List<DataFileAction> files = tables.writeDataFiles(path, SCHEMA, List.of(row));
    return tables.commit(
        path, files, "app", batch, Map.of("lakecdc.test", "{\"batch\":" + batch + "}"), timing);
  }

  /**
   * Makes the background thread note its name in {@code writers}, count {@code writing} down and
   * wait for {@code release} before it writes each checkpoint.
   */
  private static void holdCheckpoints(
      DeltaTables tables, List<String> writers, CountDownLatch writing, CountDownLatch release) {
    tables
        .backgroundCheckpoints()
        .beforeWrite(
            () -> {
              writers.add(Thread.currentThread().getName());
              writing.countDown();
              try {
                release.await(60, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }

  @Test
  void theCheckpointOfVersionTenIsWrittenAfterItsCommitReturnedAndReadersReadEveryVersion()
      throws Exception {
    DeltaTables tables = DeltaTables.create();
    String path = dir.resolve("bronze").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    Path log = dir.resolve("bronze/_delta_log");
    Path checkpoint = log.resolve("00000000000000000010.checkpoint.parquet");
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch writing = new CountDownLatch(1);
    List<String> writers = new ArrayList<>();
    holdCheckpoints(tables, writers, writing, release);

    // Versions 2..10: batch b lands as version b; version 10 offers a checkpoint.
    for (long batch = 2; batch <= 10; batch++) {
      CommitResult result = commitBatch(tables, path, batch, CheckpointTiming.IN_BACKGROUND);
      assertEquals(CommitResult.Status.COMMITTED, result.status());
      assertEquals(batch, result.version());
    }
    assertTrue(writing.await(60, TimeUnit.SECONDS), "the background thread took the checkpoint");
    // The commit of version 10 returned, and the next one lands, while the checkpoint waits.
    assertFalse(Files.exists(checkpoint));
    assertEquals(11, commitBatch(tables, path, 11, CheckpointTiming.IN_BACKGROUND).version());
    assertFalse(Files.exists(log.resolve("_last_checkpoint")));
    DeltaTables reader = DeltaTables.create();
    assertEquals(11, reader.version(path));
    assertEquals(OptionalLong.of(11), reader.latestTransactionVersion(path, "app"));
    assertEquals(10, reader.scan(path).size());

    release.countDown();
    tables.awaitCheckpoints();
    assertEquals(List.of("lakecdc-checkpoint-1"), writers);
    assertTrue(Files.exists(checkpoint));
    assertEquals(
        10L,
        new ObjectMapper()
            .readTree(log.resolve("_last_checkpoint").toFile())
            .get("version")
            .asLong());
    // A new reader starts from the checkpoint: every batch, the last position, version 11.
    DeltaTables after = DeltaTables.create();
    assertEquals(11, after.version(path));
    assertEquals(OptionalLong.of(11), after.latestTransactionVersion(path, "app"));
    assertEquals(
        java.util.Optional.of("{\"batch\":11}"), after.domainMetadata(path, "lakecdc.test"));
    assertEquals(10, after.scan(path).size());
    // The writer's own next commit reads the table from the new checkpoint: batch 12, version 12.
    assertEquals(12, commitBatch(tables, path, 12, CheckpointTiming.IN_BACKGROUND).version());
    assertEquals(OptionalLong.of(12), tables.latestTransactionVersion(path, "app"));
  }

  @Test
  void aCheckpointStillInFlightMakesTheNextIntervalSkipItsOwn() throws Exception {
    DeltaTables tables = DeltaTables.create();
    String path = dir.resolve("bronze").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    tables.setTableProperties(path, Map.of("delta.checkpointInterval", "3"));
    Path log = dir.resolve("bronze/_delta_log");
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch writing = new CountDownLatch(1);
    holdCheckpoints(tables, new ArrayList<>(), writing, release);
    // Version 2 is the property's commit; batches 3..6 land as versions 3..6.
    for (long batch = 3; batch <= 6; batch++) {
      assertEquals(
          batch, commitBatch(tables, path, batch, CheckpointTiming.IN_BACKGROUND).version());
      if (batch == 3) {
        assertTrue(writing.await(60, TimeUnit.SECONDS));
      }
    }
    release.countDown();
    tables.awaitCheckpoints();
    // Version 3's checkpoint was in flight when version 6 offered one: only version 3's is there.
    List<String> checkpoints;
    try (var files = Files.list(log)) {
      checkpoints =
          files
              .map(f -> f.getFileName().toString())
              .filter(n -> n.endsWith(".checkpoint.parquet"))
              .sorted()
              .toList();
    }
    assertEquals(List.of("00000000000000000003.checkpoint.parquet"), checkpoints);
    // The next interval writes its own: version 9.
    tables.backgroundCheckpoints().beforeWrite(() -> {});
    for (long batch = 7; batch <= 9; batch++) {
      assertEquals(
          batch, commitBatch(tables, path, batch, CheckpointTiming.IN_BACKGROUND).version());
    }
    tables.awaitCheckpoints();
    assertTrue(Files.exists(log.resolve("00000000000000000009.checkpoint.parquet")));
    assertFalse(Files.exists(log.resolve("00000000000000000006.checkpoint.parquet")));
    assertEquals(OptionalLong.of(9), DeltaTables.create().latestTransactionVersion(path, "app"));
  }

  @Test
  void twoTablesCheckpointsAreWrittenAtOnce() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        BackgroundCheckpoints.THREADS == 2, "a JVM with one processor has one checkpoint thread");
    DeltaTables tables = DeltaTables.create();
    List<String> paths =
        List.of(dir.resolve("bronze_a").toString(), dir.resolve("bronze_b").toString());
    for (String path : paths) {
      tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
      tables.setTableProperties(path, Map.of("delta.checkpointInterval", "3"));
    }
    List<String> writers = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch writing = new CountDownLatch(2);
    holdCheckpoints(tables, writers, writing, release);
    // Version 2 is the property's commit; batch 3 lands as version 3 and offers its checkpoint.
    for (String path : paths) {
      assertEquals(3, commitBatch(tables, path, 3, CheckpointTiming.IN_BACKGROUND).version());
    }
    // Both checkpoints are being written together: neither waits behind the other.
    assertTrue(writing.await(60, TimeUnit.SECONDS));
    release.countDown();
    tables.awaitCheckpoints();
    assertEquals(2, new java.util.HashSet<>(writers).size(), String.valueOf(writers));
    for (String path : paths) {
      assertTrue(
          Files.exists(Path.of(path, "_delta_log", "00000000000000000003.checkpoint.parquet")));
    }
  }

  @Test
  void aCommitInTheCommitWritesItsCheckpointBeforeItReturns() {
    DeltaTables tables = DeltaTables.create();
    String path = dir.resolve("bronze").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    List<String> background = new ArrayList<>();
    tables.backgroundCheckpoints().beforeWrite(() -> background.add("checkpoint"));
    for (long batch = 2; batch <= 10; batch++) {
      commitBatch(tables, path, batch, CheckpointTiming.IN_COMMIT);
    }
    assertEquals(List.of(), background, "no checkpoint went to the background thread");
    assertTrue(
        Files.exists(dir.resolve("bronze/_delta_log/00000000000000000010.checkpoint.parquet")));
  }
}
