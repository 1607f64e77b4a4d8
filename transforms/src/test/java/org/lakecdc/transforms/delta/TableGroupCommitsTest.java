package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

class TableGroupCommitsTest {
  @TempDir Path dir;

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("batch", OutputType.BIGINT, "Batch"),
          DeltaColumn.nullable("app", OutputType.STRING, "App id"));
  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private final DeltaTables tables = DeltaTables.create();
  private final TableSnapshots snapshots = new TableSnapshots(new Configuration());
  private final TableGroupCommits group =
      new TableGroupCommits(
          snapshots,
          new TableCommits(
              snapshots,
              new ParquetDataFiles(snapshots.fileIO(), snapshots.hadoopConf()),
              Clock.systemUTC()),
          Clock.systemUTC());
  private final ExecutorService pool = Executors.newFixedThreadPool(4);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  private String table() {
    String path = dir.resolve("facts").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    return path;
  }

  private static TableGroupCommits.Member member(String app, long batch, String value) {
    return new TableGroupCommits.Member(
        SCHEMA,
        List.of(Row.withSchema(SCHEMA).addValues(batch, value).build()),
        app,
        batch,
        Map.of("lakecdc.test." + app, "{\"batch\":" + batch + "}"));
  }

  /** The rows as "app:batch" counted. */
  private Map<String, Integer> rows(String path) {
    Map<String, Integer> counts = new TreeMap<>();
    for (Map<String, Object> row : tables.scan(path)) {
      counts.merge(row.get("app") + ":" + row.get("batch"), 1, Integer::sum);
    }
    return counts;
  }

  /** The actions of a version's commit file, by kind ({@code add}, {@code txn}, ...), counted. */
  private Map<String, Integer> actions(long version) throws IOException {
    Map<String, Integer> counts = new TreeMap<>();
    for (String line :
        Files.readAllLines(
            dir.resolve("facts/_delta_log/" + String.format("%020d.json", version)))) {
      String kind = line.substring(2, line.indexOf('"', 2));
      counts.merge(kind, 1, Integer::sum);
    }
    return counts;
  }

  /** Waits until {@code n} appends queue behind the commit in flight. */
  private void awaitWaiting(String path, int n) {
    try {
      if (!group.awaitWaiting(path, n, 60_000)) {
        throw new IllegalStateException("fewer than " + n + " appends queued within 60 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Starts {@code member}'s append, whose commit stays in flight until {@code queued} other appends
   * wait behind it; returns once it is in flight.
   */
  private Future<CommitResult> inFlightUntilQueued(
      String path, TableGroupCommits.Member member, int queued) throws InterruptedException {
    CountDownLatch inFlight = new CountDownLatch(1);
    Future<CommitResult> result =
        pool.submit(
            () ->
                group.append(
                    path,
                    member,
                    () -> {
                      inFlight.countDown();
                      awaitWaiting(path, queued);
                    }));
    assertTrue(inFlight.await(60, TimeUnit.SECONDS));
    return result;
  }

  @Test
  void appendsQueuedBehindACommitInFlightLandTogetherInTheNextCommit() throws Exception {
    String path = table();
    Future<CommitResult> a = inFlightUntilQueued(path, member("a", 1, "a"), 3);
    Future<CommitResult> b = pool.submit(() -> group.append(path, member("b", 1, "b"), () -> {}));
    Future<CommitResult> c = pool.submit(() -> group.append(path, member("c", 1, "c"), () -> {}));
    Future<CommitResult> d = pool.submit(() -> group.append(path, member("d", 1, "d"), () -> {}));

    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 2, 1, 0), a.get());
    for (Future<CommitResult> other : List.of(b, c, d)) {
      assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 3, 1, 0), other.get());
    }
    assertEquals(Map.of("a:1", 1, "b:1", 1, "c:1", 1, "d:1", 1), rows(path));
    // One data file and three transaction identifiers (each member's own) in version 3.
    assertEquals(Map.of("add", 1, "commitInfo", 1, "domainMetadata", 3, "txn", 3), actions(3));
    for (String app : List.of("a", "b", "c", "d")) {
      assertEquals(OptionalLong.of(1), tables.latestTransactionVersion(path, app));
      assertEquals(
          "{\"batch\":1}", tables.domainMetadata(path, "lakecdc.test." + app).orElseThrow());
    }
  }

  @Test
  void aMemberAnotherWriterCommitsMeanwhileIsLeftOutAndTheRestCommittedOnce() throws Exception {
    String path = table();
    AtomicBoolean first = new AtomicBoolean(true);
    // a's commit is in flight while b and c queue; then, before the group of b and c commits,
    // another writer (a retried task elsewhere) commits b's batch 3 on its own.
    Future<CommitResult> a = inFlightUntilQueued(path, member("a", 3, "a"), 2);
    Runnable competitor =
        () -> {
          if (first.getAndSet(false)) {
            tables.append(
                path,
                SCHEMA,
                List.of(Row.withSchema(SCHEMA).addValues(3L, "b-elsewhere").build()),
                "b",
                3,
                Map.of());
          }
        };
    Future<CommitResult> b = pool.submit(() -> group.append(path, member("b", 3, "b"), competitor));
    Future<CommitResult> c = pool.submit(() -> group.append(path, member("c", 3, "c"), competitor));

    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 2, 1, 0), a.get());
    // The group of b and c lost version 3 to the other writer; checked again, b was left out.
    assertEquals(new CommitResult(CommitResult.Status.ALREADY_COMMITTED, 3, 0, 0), b.get());
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, 4, 1, 0), c.get());
    assertEquals(Map.of("a:3", 1, "b-elsewhere:3", 1, "c:3", 1), rows(path));
    assertEquals(Map.of("add", 1, "commitInfo", 1, "domainMetadata", 1, "txn", 1), actions(4));
  }

  @Test
  void aFailureBetweenCommitsFailsTheGroupAndItsRetryCommitsEachMemberOnce() throws Exception {
    String path = table();
    assertEquals(
        new CommitResult(CommitResult.Status.COMMITTED, 2, 1, 0),
        group.append(path, member("a", 1, "a"), () -> {}));
    IllegalStateException crash =
        assertThrows(
            IllegalStateException.class,
            () ->
                group.append(
                    path,
                    member("a", 2, "a"),
                    () -> {
                      throw new IllegalStateException("killed before the commit");
                    }));
    assertEquals("killed before the commit", crash.getMessage());
    // Retried: batch 1 again (committed before) and batch 2 (never committed) are each once.
    assertEquals(
        new CommitResult(CommitResult.Status.ALREADY_COMMITTED, 2, 0, 0),
        group.append(path, member("a", 1, "a"), () -> {}));
    assertEquals(
        new CommitResult(CommitResult.Status.COMMITTED, 3, 1, 0),
        group.append(path, member("a", 2, "a"), () -> {}));
    assertEquals(
        new CommitResult(CommitResult.Status.ALREADY_COMMITTED, 3, 0, 0),
        group.append(path, member("a", 2, "a"), () -> {}));
    assertEquals(Map.of("a:1", 1, "a:2", 1), rows(path));
    assertEquals(OptionalLong.of(2), tables.latestTransactionVersion(path, "a"));
  }

  // A committer round's appends (DeltaTables.appendRound).

  private static GroupedAppend append(String app, long batch) {
    return new GroupedAppend(
        SCHEMA,
        List.of(Row.withSchema(SCHEMA).addValues(batch, app).build()),
        app,
        batch,
        Map.of("lakecdc.test." + app, "{\"batch\":" + batch + "}"));
  }

  private static List<String> outcomes(List<CommitResult> results) {
    List<String> out = new ArrayList<>();
    for (CommitResult r : results) {
      out.add(r.status() + " v" + r.version());
    }
    return out;
  }

  @Test
  void aRoundOfThreeAppIdsIsOneCommitOfOneFileAndItsReplayWritesNothing() throws IOException {
    String path = table();
    long created = tables.version(path);

    List<CommitResult> first =
        tables.appendRound(path, List.of(append("a", 0), append("b", 0), append("c", 0)));

    long round = created + 1;
    assertEquals(
        List.of("COMMITTED v" + round, "COMMITTED v" + round, "COMMITTED v" + round),
        outcomes(first));
    assertEquals(round, tables.version(path));
    assertEquals(1, first.get(0).filesAdded());
    Map<String, Integer> actions = actions(round);
    assertEquals(1, actions.get("add"));
    assertEquals(3, actions.get("txn"));
    assertEquals(3, actions.get("domainMetadata"));
    assertEquals(Map.of("a:0", 1, "b:0", 1, "c:0", 1), rows(path));
    assertEquals(0L, tables.latestTransactionVersion(path, "c").getAsLong());
    assertEquals("{\"batch\":0}", tables.domainMetadata(path, "lakecdc.test.b").orElseThrow());

    // A replay of the round plus b's next batch: only b's batch 1 is new.
    List<CommitResult> replay =
        tables.appendRound(path, List.of(append("a", 0), append("b", 1), append("c", 0)));

    assertEquals(
        List.of(
            "ALREADY_COMMITTED v" + round,
            "COMMITTED v" + (round + 1),
            "ALREADY_COMMITTED v" + round),
        outcomes(replay));
    assertEquals(round + 1, tables.version(path));
    assertEquals(Map.of("a:0", 1, "b:0", 1, "b:1", 1, "c:0", 1), rows(path));
    assertEquals(1, actions(round + 1).get("txn"));
    assertEquals("{\"batch\":1}", tables.domainMetadata(path, "lakecdc.test.b").orElseThrow());
  }

  @Test
  void twoAppendsOfOneAppIdInARoundAreRefusedAndNothingIsWritten() {
    String path = table();
    long created = tables.version(path);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> tables.appendRound(path, List.of(append("a", 0), append("a", 1))));
    assertEquals("Two appends of app id a to " + path + " in one group commit", e.getMessage());
    assertEquals(created, tables.version(path));
    assertEquals(List.of(), tables.appendRound(path, List.of()));
  }
}
