package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.beam.sdk.values.Row;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;

/**
 * The job's own facts and control tables stay small: compaction of their files into one, exactly
 * once kept (transaction identifiers still skip replays), compaction racing appends, the committer
 * compacting by itself, and the checkpoint interval (docs/tables.md "Compaction and checkpoints of
 * facts and control").
 */
class SmallFileCompactionTest {
  private static final String APP = "dbo_orders";

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private String facts() {
    String path = dir.resolve("facts").toString();
    tables.createIfAbsent(path, FactsTable.definition());
    return path;
  }

  private static Row batch(long id) {
    return FactsTable.row()
        .set(FactsTable.APP_ID, APP)
        .set(FactsTable.BATCH_ID, id)
        .set(FactsTable.ROWS, id * 10)
        .build();
  }

  private CommitResult append(String path, long id) {
    return tables.append(path, FactsTable.SCHEMA, List.of(batch(id)), APP, id, Map.of());
  }

  /** The (batch_id, rows) of every facts row, file by file in the log's order. */
  private List<String> rows(String path) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(path)) {
      rows.add(row.get(FactsTable.BATCH_ID) + ":" + row.get(FactsTable.ROWS));
    }
    rows.sort(java.util.Comparator.comparingLong(s -> Long.parseLong(s.split(":")[0])));
    return rows;
  }

  private static List<String> expected(int batches) {
    return LongStream.range(0, batches).mapToObj(i -> i + ":" + i * 10).toList();
  }

  /** The checkpoint files of the table's log, by name. */
  private List<String> checkpoints(String path) throws IOException {
    try (Stream<Path> files = Files.list(Path.of(path, "_delta_log"))) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.contains(".checkpoint") && !n.startsWith("."))
          .sorted()
          .toList();
    }
  }

  /** How many rows of a checkpoint file hold an {@code add}, and how many a {@code txn}. */
  private static long[] checkpointActions(String path, long version) {
    String file = String.format("%s/_delta_log/%020d.checkpoint.parquet", path, version);
    long[] counts = new long[2];
    try (ParquetReader<Group> reader =
        ParquetReader.builder(new GroupReadSupport(), new org.apache.hadoop.fs.Path(file))
            .build()) {
      Group group;
      while ((group = reader.read()) != null) {
        counts[0] += group.getFieldRepetitionCount("add");
        counts[1] += group.getFieldRepetitionCount("txn");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return counts;
  }

  @Test
  void thirtyBatchesCompactIntoOneFileWithTheSameRowsAndAReplayedBatchIsStillSkipped()
      throws IOException {
    String path = facts();
    for (long id = 0; id < 30; id++) {
      append(path, id);
    }
    assertEquals(31, tables.version(path));
    assertEquals(30, tables.dataFileDetails(path).size());

    SmallFileCompaction.Outcome outcome = tables.compactSmallFiles(path);

    assertEquals(new FileCompaction.Result(true, 32, 30, 1, 30, 0), outcome.compaction());
    assertEquals(30, outcome.filesBefore());
    assertEquals(1, outcome.filesAfter());
    assertEquals(1, outcome.attempts());
    assertEquals(1, tables.dataFileDetails(path).size());
    assertEquals(expected(30), rows(path));
    // The one file holds the rows in commit order.
    List<Object> stored = tables.scan(path).stream().map(r -> r.get(FactsTable.BATCH_ID)).toList();
    assertEquals(LongStream.range(0, 30).boxed().toList(), stored);
    // The compaction's version is checkpointed: one file, one app id's txn.
    assertEquals(List.of("00000000000000000032.checkpoint.parquet"), checkpoints(path));
    assertEquals(List.of(1L, 1L), List.of(boxed(checkpointActions(path, 32))));
    // Exactly once survives: the identifiers answer from the log and the checkpoint.
    assertEquals(29, tables.latestTransactionVersion(path, APP).getAsLong());
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, append(path, 7).status());
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, append(path, 29).status());
    DeltaTables cold = DeltaTables.create();
    assertEquals(29, cold.latestTransactionVersion(path, APP).getAsLong());
    assertEquals(
        CommitResult.Status.ALREADY_COMMITTED,
        cold.append(path, FactsTable.SCHEMA, List.of(batch(12)), APP, 12, Map.of()).status());
    assertEquals(expected(30), rows(path));
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 33, 1, 0), append(path, 30));
    assertEquals(expected(31), rows(path));
    assertEquals(2, tables.dataFileDetails(path).size());
    // The compaction is not a data change: its commit removes and adds with dataChange false.
    CommitSummary compaction = tables.history(path).get(32);
    assertEquals("Manual Update", compaction.operation());
  }

  private static Long[] boxed(long[] values) {
    return LongStream.of(values).boxed().toArray(Long[]::new);
  }

  @Test
  void theCommitterCompactsFactsByItselfAndTheCheckpointListsTheCompactedFile()
      throws IOException, InterruptedException {
    String path = facts();
    assertEquals("100", tables.describe(path).properties().get("delta.checkpointInterval"));
    // Versions 0 and 1 create the table; batches 0..96 land versions 2..98.
    for (long id = 0; id < 97; id++) {
      append(path, id);
    }
    assertEquals(97, tables.dataFileDetails(path).size());
    assertEquals(List.of(), checkpoints(path), "no checkpoint every 10 versions");

    // Batch 97 lands version 99: its writer checks, finds 98 small files and compacts them into
    // one at version 100, the version Kernel checkpoints.
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 99, 1, 0), append(path, 97));
    tables.awaitCompactions();

    assertEquals(100, tables.version(path));
    assertEquals(1, tables.dataFileDetails(path).size());
    assertEquals(expected(98), rows(path));
    assertEquals(List.of("00000000000000000100.checkpoint.parquet"), checkpoints(path));
    // The checkpoint lists the one compacted file and the app id's txn.
    assertEquals(List.of(1L, 1L), List.of(boxed(checkpointActions(path, 100))));
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, append(path, 9).status());
    assertEquals(97, tables.latestTransactionVersion(path, APP).getAsLong());
    // The next batches append small files again until the next check.
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 101, 1, 0), append(path, 98));
    assertEquals(2, tables.dataFileDetails(path).size());
    assertEquals(expected(99), rows(path));
  }

  /**
   * A facts table whose commits check every 10 versions from 5 small files, with batches 0..6
   * appended (versions 2..8): the next append lands version 9 and checks.
   */
  private String factsBeforeTheCheck() {
    tables.smallFiles().checkEvery(10, 5);
    String path = facts();
    for (long id = 0; id < 7; id++) {
      append(path, id);
    }
    return path;
  }

  @Test
  void aCommittersCommitWhileACompactionIsInFlightReturnsAtOnceAndBothLandRowsExactlyOnce()
      throws InterruptedException {
    String path = factsBeforeTheCheck();
    CountDownLatch inFlight = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger attempts = new AtomicInteger();
    tables
        .smallFiles()
        .beforeBackgroundCommit(
            () -> {
              if (attempts.incrementAndGet() == 1) {
                inFlight.countDown();
                awaitUninterruptibly(release);
              }
            });

    // Batch 7 lands version 9 and hands the compaction to the background thread.
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 9, 1, 0), append(path, 7));
    awaitUninterruptibly(inFlight);
    // The compaction has written its file and waits before its commit: committers go on.
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 10, 1, 0), append(path, 8));
    assertEquals(
        new CommitResult(CommitResult.Status.COMMITTED, 11, 1, 0),
        tables.appendGrouped(path, FactsTable.SCHEMA, List.of(batch(9)), APP, 9, Map.of()));
    assertEquals(10, tables.dataFileDetails(path).size());
    release.countDown();
    tables.awaitCompactions();

    // Its first commit lost to the appends, which only added files: it committed the file it had
    // written on the new version, replacing the 8 files it listed; the 2 appended stay.
    assertEquals(2, attempts.get());
    assertEquals(12, tables.version(path));
    assertEquals(3, tables.dataFileDetails(path).size());
    assertEquals("Manual Update", tables.history(path).get(12).operation());
    assertEquals(expected(10), rows(path));
    assertEquals(9, tables.latestTransactionVersion(path, APP).getAsLong());
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, append(path, 8).status());
    assertEquals(expected(10), rows(path));
  }

  @Test
  void aCompactionThatKeepsLosingGivesUpWithoutFailingAnyCommitAndTheNextCheckCompacts()
      throws InterruptedException {
    String path = factsBeforeTheCheck();
    tables.smallFiles().maxRebases(1);
    long[] next = {8};
    tables.smallFiles().beforeBackgroundCommit(() -> append(path, next[0]++));

    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 9, 1, 0), append(path, 7));
    tables.awaitCompactions();

    // Three attempts, each a commit and one rebase, each lost to an append made just before it:
    // nothing compacted, every append landed.
    assertEquals(14, next[0]);
    assertEquals(15, tables.version(path));
    assertEquals(14, tables.dataFileDetails(path).size());
    assertEquals(expected(14), rows(path));

    // The next check (the commit landing version 19) compacts.
    tables.smallFiles().beforeBackgroundCommit(() -> {});
    for (long id = 14; id < 17; id++) {
      append(path, id);
    }
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 19, 1, 0), append(path, 17));
    tables.awaitCompactions();
    assertEquals(20, tables.version(path));
    assertEquals(1, tables.dataFileDetails(path).size());
    assertEquals(expected(18), rows(path));
    assertEquals(17, tables.latestTransactionVersion(path, APP).getAsLong());
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      assertTrue(latch.await(60, TimeUnit.SECONDS), "the other thread got there");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aCompactionThatLosesToAnAppendListsAgainAndBothLand() {
    String path = facts();
    for (long id = 0; id < 10; id++) {
      append(path, id);
    }
    boolean[] appended = new boolean[1];

    SmallFileCompaction.Outcome outcome =
        tables
            .smallFiles()
            .compact(
                path,
                () -> {
                  if (!appended[0]) {
                    appended[0] = true;
                    assertEquals(12, append(path, 10).version());
                  }
                });

    assertEquals(2, outcome.attempts());
    assertEquals(new FileCompaction.Result(true, 13, 11, 1, 11, 0), outcome.compaction());
    assertEquals(11, outcome.filesBefore());
    assertEquals(1, outcome.filesAfter());
    assertEquals(expected(11), rows(path));
    assertEquals(10, tables.latestTransactionVersion(path, APP).getAsLong());
  }

  @Test
  void anAppendStartedBeforeACompactionIsRebasedOverItAndBothLand() {
    String path = facts();
    for (long id = 0; id < 10; id++) {
      append(path, id);
    }
    List<DataFileAction> files = tables.writeDataFiles(path, FactsTable.SCHEMA, List.of(batch(10)));
    SmallFileCompaction.Outcome[] compacted = new SmallFileCompaction.Outcome[1];

    CommitResult result =
        tables
            .commits()
            .commit(
                path,
                files,
                APP,
                10,
                Map.of(),
                () -> compacted[0] = tables.compactSmallFiles(path));

    assertEquals(new FileCompaction.Result(true, 12, 10, 1, 10, 0), compacted[0].compaction());
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 13, 1, 0), result);
    assertEquals(expected(11), rows(path));
    assertEquals(2, tables.dataFileDetails(path).size());
    assertEquals(10, tables.latestTransactionVersion(path, APP).getAsLong());
  }

  @Test
  void oldTablesGetTheCheckpointIntervalWhenOpenedAndAnOwnersValueIsKept() {
    String old = dir.resolve("old-control").toString();
    DeltaTablesTest.createBareTable(
        old,
        ControlTable.definition().columns(),
        Map.of(
            TableProperties.TABLE_KIND,
            "control",
            TableProperties.SCHEMA_VERSION,
            String.valueOf(TableKind.CONTROL.currentVersion())));

    OpenResult opened = tables.createIfAbsent(old, ControlTable.definition());

    assertEquals("100", tables.describe(old).properties().get("delta.checkpointInterval"));
    assertEquals(tables.version(old), opened.version());
    long version = tables.version(old);
    tables.createIfAbsent(old, ControlTable.definition());
    assertEquals(version, tables.version(old), "nothing is written once it is set");

    String owned = dir.resolve("owned-facts").toString();
    tables.createIfAbsent(
        owned,
        new TableDefinition(
            TableKind.FACTS,
            FactsTable.definition().columns(),
            TableKind.FACTS.tableComment(),
            Map.of("delta.checkpointInterval", "7")));
    tables.createIfAbsent(owned, FactsTable.definition());
    assertEquals("7", tables.describe(owned).properties().get("delta.checkpointInterval"));
    // Bronze keeps Delta's default.
    String bronze = dir.resolve("bronze").toString();
    tables.createIfAbsent(
        bronze, TableDefinition.of(TableKind.BRONZE, ControlTable.definition().columns()));
    assertTrue(!tables.describe(bronze).properties().containsKey("delta.checkpointInterval"));
  }

  @Test
  void aCompactionTakesAtMostTheCapOfFilesPerRunAndTheRestInTheRunsAfterItRowsExactlyOnce()
      throws InterruptedException {
    tables.smallFiles().checkEvery(10, 2);
    tables.smallFiles().maxFilesPerRun(3);
    String path = facts();
    for (long id = 0; id < 7; id++) {
      append(path, id);
    }
    assertEquals(8, tables.version(path));
    assertEquals(7, tables.dataFileDetails(path).size());

    // Batch 7 lands version 9: the check finds 8 small files, more than a run's 3.
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 9, 1, 0), append(path, 7));
    tables.awaitCompactions();

    // Runs of 3, 3 and 3 files (the third takes the first run's file, by then among the oldest),
    // then the last 2: four commits, each its own version, then one file.
    List<String> runs = new ArrayList<>();
    for (CommitSummary commit : tables.history(path).subList(10, 14)) {
      runs.add(
          commit.version()
              + " "
              + commit.operation()
              + " -"
              + commit.filesRemoved()
              + " +"
              + commit.filesAdded());
    }
    assertEquals(
        List.of(
            "10 Manual Update -3 +1",
            "11 Manual Update -3 +1",
            "12 Manual Update -3 +1",
            "13 Manual Update -2 +1"),
        runs);
    assertEquals(13, tables.version(path));
    assertEquals(1, tables.dataFileDetails(path).size());
    assertEquals(expected(8), rows(path));
    assertEquals(7, tables.latestTransactionVersion(path, APP).getAsLong());
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, append(path, 3).status());
    assertEquals(expected(8), rows(path));
  }
}
