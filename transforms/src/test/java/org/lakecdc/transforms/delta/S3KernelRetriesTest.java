package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.kernel.Table;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.InvalidTableException;
import io.delta.kernel.exceptions.KernelException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.locals3.LocalS3Server;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * What Delta Kernel throws while loading a snapshot or committing on S3, reproduced on the local S3
 * server with {@link FaultyLogStore} (a listing that misses files just written, a server stopped
 * around a commit's PUT), and what {@link DeltaTables} makes of it with {@link KernelRetries}: the
 * step is retried from a fresh snapshot, a commit is reported once and only when it happened, and a
 * checkpoint that fails after its commit fails nothing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class S3KernelRetriesTest {
  @TempDir static Path dir;
  private static LocalS3Server server;
  private static Map<String, String> conf;
  private static int tableCount;

  @BeforeAll
  static void startServer() throws Exception {
    server = LocalS3Server.start(dir.resolve("s3"));
    server.createBucket("retries");
    conf = new LinkedHashMap<>(server.hadoopConf());
    conf.put(S3ConditionalLogStore.CONF_KEY, FaultyLogStore.class.getName());
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void noFaults() {
    FaultyLogStore.reset();
  }

  private static String newTable() {
    return "s3a://retries/retries/t" + (++tableCount);
  }

  private static Row fact(String appId, long batch) {
    return FactsTable.row()
        .set(FactsTable.APP_ID, appId)
        .set(FactsTable.BATCH_ID, batch)
        .set(FactsTable.ROWS, 1L)
        .build();
  }

  /** A table with {@code appends} appends after its two creation commits. */
  private static String table(DeltaTables tables, int appends) {
    String path = newTable();
    // Delta's default checkpoint interval (10), which these tests' checkpoints are placed for.
    tables.createIfAbsent(
        path, TableDefinition.of(TableKind.FACTS, FactsTable.definition().columns()));
    for (int i = 0; i < appends; i++) {
      tables.append(path, FactsTable.SCHEMA, List.of(fact("w", i)), "w", i, Map.of());
    }
    return path;
  }

  private static Engine kernel() {
    Configuration hadoop = new Configuration();
    conf.forEach(hadoop::set);
    return DefaultEngine.create(hadoop);
  }

  private static Path bucketFile(String path, String file) {
    return server
        .bucketDirectory("retries")
        .resolve(path.substring("s3a://retries/".length()))
        .resolve(file);
  }

  @Test
  void aListingThatMissesACommitFailsKernelAndIsRetried() {
    DeltaTables tables = DeltaTables.create(conf);
    String path = table(tables, 3);
    assertEquals(4, tables.version(path));

    FaultyLogStore.hideFromNextListing(name -> name.equals("00000000000000000002.json"));
    InvalidTableException kernel =
        assertThrows(
            InvalidTableException.class,
            () -> Table.forPath(kernel(), path).getLatestSnapshot(kernel()));
    assertTrue(
        kernel
            .getMessage()
            .contains("Missing delta files: versions are not contiguous: ([0, 1, 3, 4])"),
        kernel.getMessage());
    assertTrue(KernelRetries.isRetryable(kernel));

    FaultyLogStore.hideFromNextListing(name -> name.equals("00000000000000000002.json"));
    assertEquals(4, DeltaTables.create(conf).version(path));
    assertEquals(2, FaultyLogStore.FIRED.get());
  }

  @Test
  void aListingThatMissesTheLastCheckpointFailsKernelAndIsRetried() {
    DeltaTables tables = DeltaTables.create(conf);
    String path = table(tables, 9);
    assertTrue(
        Files.exists(bucketFile(path, "_delta_log/00000000000000000010.checkpoint.parquet")));

    // The listing from the checkpoint misses everything; the listings of the fallback from
    // version 0 (for an earlier checkpoint, then of the log) miss a commit, and the second one
    // the checkpoint too.
    missCheckpointedLog();
    InvalidTableException kernel =
        assertThrows(
            InvalidTableException.class,
            () -> Table.forPath(kernel(), path).getLatestSnapshot(kernel()));
    assertTrue(
        kernel.getMessage().contains("Missing checkpoint at version 10"), kernel.getMessage());
    assertTrue(KernelRetries.isRetryable(kernel));

    missCheckpointedLog();
    DeltaTables fresh = DeltaTables.create(conf);
    assertEquals(10, fresh.version(path));
    assertEquals(9, fresh.scan(path).size());
    assertEquals(6, FaultyLogStore.FIRED.get());
  }

  private static void missCheckpointedLog() {
    FaultyLogStore.hideFromNextListing(name -> true);
    FaultyLogStore.hideFromNextListing(name -> name.equals("00000000000000000005.json"));
    FaultyLogStore.hideFromNextListing(
        name -> name.equals("00000000000000000005.json") || name.endsWith(".checkpoint.parquet"));
  }

  @Test
  void aLostCommitWhoseListingShowsNoWinnerIsRetriedFromAFreshSnapshot() {
    DeltaTables tables = DeltaTables.create(conf);
    DeltaTables other = DeltaTables.create(conf);
    String path = table(tables, 1);
    List<DataFileAction> files =
        tables.writeDataFiles(path, FactsTable.SCHEMA, List.of(fact("a", 0)));
    // Between building its transaction on version 2 and committing it, another writer takes
    // version 3; the loser's listing of the winning commits then shows none.
    CommitResult result =
        tables
            .commits()
            .commit(
                path,
                files,
                "a",
                0,
                Map.of(),
                () -> {
                  assertEquals(
                      3,
                      other
                          .append(path, FactsTable.SCHEMA, List.of(fact("b", 0)), "b", 0, Map.of())
                          .version());
                  FaultyLogStore.hideFromNextListing(name -> true);
                });
    assertEquals(CommitResult.Status.COMMITTED, result.status());
    assertEquals(4, result.version());
    assertEquals(1, FaultyLogStore.FIRED.get());
    List<String> txns = new ArrayList<>();
    for (CommitSummary c : tables.history(path)) {
      if (c.txnAppId() != null) {
        txns.add(c.version() + ":" + c.txnAppId() + "/" + c.txnVersion().getAsLong());
      }
    }
    assertEquals(List.of("2:w/0", "3:b/0", "4:a/0"), txns);
    assertTrue(KernelRetries.isRetryable(new IllegalStateException("No winning commits found.")));
  }

  @Test
  void aLostCommitWhoseListingMissesOneOfTwoWinnersLandsOnceAfterThem() {
    DeltaTables tables = DeltaTables.create(conf);
    DeltaTables other = DeltaTables.create(conf);
    String path = table(tables, 1);
    List<DataFileAction> files =
        tables.writeDataFiles(path, FactsTable.SCHEMA, List.of(fact("a", 0)));
    // Between building its transaction on version 2 and committing it, two writers take versions
    // 3 and 4; the loser's listing of the winning commits misses 3 and shows 4.
    CommitResult result =
        tables
            .commits()
            .commit(
                path,
                files,
                "a",
                0,
                Map.of(),
                () -> {
                  assertEquals(
                      3,
                      other
                          .append(path, FactsTable.SCHEMA, List.of(fact("b", 0)), "b", 0, Map.of())
                          .version());
                  assertEquals(
                      4,
                      other
                          .append(path, FactsTable.SCHEMA, List.of(fact("c", 0)), "c", 0, Map.of())
                          .version());
                  FaultyLogStore.hideFromNextListing(
                      name -> name.equals("00000000000000000003.json"));
                });
    assertEquals(CommitResult.Status.COMMITTED, result.status());
    assertEquals(5, result.version());
    assertEquals(1, FaultyLogStore.FIRED.get());
    List<String> txns = new ArrayList<>();
    for (CommitSummary c : tables.history(path)) {
      if (c.txnAppId() != null) {
        txns.add(c.version() + ":" + c.txnAppId() + "/" + c.txnVersion().getAsLong());
      }
    }
    assertEquals(List.of("2:w/0", "3:b/0", "4:c/0", "5:a/0"), txns);
  }

  @Test
  void aListingThatMissedSomeWinningCommitsIsRetryable() {
    // Kernel's conflict checker, after a commit lost its version, when the listing of the commits
    // that won shows a later one but not an earlier (seen with four writer JVMs on the local S3
    // server): the commit did not land, so it is started again from a fresh snapshot.
    assertTrue(
        KernelRetries.isRetryable(
            new IllegalStateException(
                "Gaps in Delta log commit files. Expected version 118 but got 119")));
    assertTrue(
        KernelRetries.isRetryable(
            new IllegalArgumentException(
                "New commit version 136 should be greater than the previous commit attempt"
                    + " version 136.")));
    assertFalse(KernelRetries.isRetryable(new IllegalStateException("Gaps in something else")));
    assertFalse(KernelRetries.isRetryable(new IllegalArgumentException("Invalid table path")));
  }

  @Test
  void aCheckpointThatCannotLoadItsVersionFailsNothingAndALaterOneIsWritten() {
    DeltaTables tables = DeltaTables.create(conf);
    String path = table(tables, 8);
    assertEquals(9, tables.version(path));
    // The checkpoint hook of version 10 lists the log right after the commit (for an earlier
    // checkpoint, then the log itself): the listings miss the commit itself.
    missTenth();
    AtomicReference<KernelException> kernel = new AtomicReference<>();
    CommitResult tenth =
        tables.append(path, FactsTable.SCHEMA, List.of(fact("w", 8)), "w", 8, Map.of());
    assertEquals(CommitResult.Status.COMMITTED, tenth.status());
    assertEquals(10, tenth.version());
    assertEquals(2, FaultyLogStore.FIRED.get());
    assertFalse(
        Files.exists(bucketFile(path, "_delta_log/00000000000000000010.checkpoint.parquet")));

    missTenth();
    kernel.set(
        assertThrows(
            KernelException.class, () -> Table.forPath(kernel(), path).checkpoint(kernel(), 10)));
    assertTrue(
        kernel.get().getMessage().contains("Cannot load table version 10 as it does not exist"),
        kernel.get().getMessage());
    assertTrue(KernelRetries.isRetryable(kernel.get()));

    for (int i = 9; i < 19; i++) {
      tables.append(path, FactsTable.SCHEMA, List.of(fact("w", i)), "w", i, Map.of());
    }
    assertEquals(20, tables.version(path));
    assertTrue(
        Files.exists(bucketFile(path, "_delta_log/00000000000000000020.checkpoint.parquet")));
    assertEquals(19, DeltaTables.create(conf).scan(path).size());
  }

  private static void missTenth() {
    FaultyLogStore.hideFromNextListing(name -> name.equals("00000000000000000010.json"));
    FaultyLogStore.hideFromNextListing(name -> name.equals("00000000000000000010.json"));
  }

  @Test
  void aCommitWhoseServerIsStoppedDuringItsPutIsRetriedAndLandsOnce() throws Exception {
    DeltaTables tables = DeltaTables.create(conf);
    String path = table(tables, 1);
    CountDownLatch failed = new CountDownLatch(1);
    FaultyLogStore.aroundNextWrite(
        new FaultyLogStore.WriteFault() {
          @Override
          public boolean matches(String fileName) {
            return fileName.equals("00000000000000000003.json");
          }

          @Override
          public void before() {
            server.stop();
          }

          @Override
          public void after(Throwable failure) {
            failed.countDown();
          }
        });
    Thread restarter = restartWhen(failed);
    CommitResult result =
        tables.append(path, FactsTable.SCHEMA, List.of(fact("w", 1)), "w", 1, Map.of());
    restarter.join();
    assertEquals(CommitResult.Status.COMMITTED, result.status());
    assertEquals(3, result.version());
    assertEquals(1, FaultyLogStore.FIRED.get());
    assertEquals(List.of("w/0", "w/1"), txns(path));
  }

  @Test
  void aCommitWhoseAnswerIsLostIsFoundCommittedAndNotWrittenTwice() throws Exception {
    DeltaTables tables = DeltaTables.create(conf);
    String path = table(tables, 1);
    CountDownLatch failed = new CountDownLatch(1);
    // The PUT of version 3 lands, then the server stops before Kernel sees its file: Kernel's
    // next attempt fails, and the server comes back.
    FaultyLogStore.aroundNextWrite(
        new FaultyLogStore.WriteFault() {
          @Override
          public boolean matches(String fileName) {
            return fileName.equals("00000000000000000003.json");
          }

          @Override
          public void after(Throwable failure) {
            server.stop();
            FaultyLogStore.aroundNextWrite(
                new FaultyLogStore.WriteFault() {
                  @Override
                  public boolean matches(String fileName) {
                    return fileName.endsWith(".json");
                  }

                  @Override
                  public void after(Throwable secondFailure) {
                    failed.countDown();
                  }
                });
          }
        });
    Thread restarter = restartWhen(failed);
    CommitResult result =
        tables.append(path, FactsTable.SCHEMA, List.of(fact("w", 1)), "w", 1, Map.of());
    restarter.join();
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, result.status());
    assertEquals(3, result.version());
    assertEquals(List.of("w/0", "w/1"), txns(path));
    assertEquals(2, DeltaTables.create(conf).scan(path).size());
  }

  private List<String> txns(String path) {
    List<String> txns = new ArrayList<>();
    for (CommitSummary c : DeltaTables.create(conf).history(path)) {
      if (c.txnAppId() != null) {
        txns.add(c.txnAppId() + "/" + c.txnVersion().getAsLong());
      }
    }
    return txns;
  }

  /** A thread that restarts the server once {@code failed} is counted down. */
  private static Thread restartWhen(CountDownLatch failed) {
    Thread thread =
        new Thread(
            () -> {
              try {
                if (failed.await(2, TimeUnit.MINUTES)) {
                  server.restart();
                }
              } catch (InterruptedException | IOException e) {
                throw new IllegalStateException(e);
              }
            });
    thread.start();
    return thread;
  }
}
