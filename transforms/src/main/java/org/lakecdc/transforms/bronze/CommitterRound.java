package org.lakecdc.transforms.bronze;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.transforms.delta.GroupedAppend;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The commits of one committer round, shared by the bounded committer ({@link CommitBatches}) and
 * the continuous one ({@link WriteChangeStreamToDelta}): the round holds at most one batch per
 * target; their bronze commits (different tables, each its own Delta log) run at once on up to
 * {@code threads} threads; then, on the caller's thread, each batch's lost periods and facts rows,
 * <b>one</b> facts commit per facts table for all of them ({@code DeltaTables#appendRound}), the
 * verdicts that move in <b>one</b> control rewrite per control table ({@link
 * Finalization#advanceAll}), and each batch's log line and metrics, in the round's order.
 *
 * <p>Not thread-safe: one instance per committer {@code DoFn} instance, {@link #close}d in its
 * teardown.
 */
final class CommitterRound implements AutoCloseable {
  /** One target's batch in a round: committed as batch {@code batchId} after {@code position}. */
  record Member(
      BatchCommitter committer,
      StreamPosition position,
      ChangeBatch batch,
      long batchId,
      @Nullable BatchFiles files) {
    BatchCommitter.Bronze commitBronze() {
      return committer.commitBronze(position, batch, batchId, files);
    }
  }

  /** The threads of a round's bronze commits; null with one thread (the caller's own). */
  private @Nullable ExecutorService pool;

  /**
   * Rounds whose bronze commits run on up to {@code threads} threads at once.
   *
   * @throws IllegalArgumentException when {@code threads} is below 1
   */
  CommitterRound(int threads) {
    checkThreads(threads);
    if (threads > 1) {
      AtomicInteger n = new AtomicInteger();
      pool =
          Executors.newFixedThreadPool(
              threads,
              r -> {
                Thread t = new Thread(r, "lakecdc-bronze-commit-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
    }
  }

  /**
   * Rounds of {@code targets} targets' batches: their bronze commits on up to {@code threads}
   * threads, never more than the targets.
   *
   * @throws IllegalArgumentException when {@code threads} is below 1
   */
  static CommitterRound of(int threads, int targets) {
    checkThreads(threads);
    return new CommitterRound(Math.max(1, Math.min(threads, targets)));
  }

  /**
   * Refuses a committer's thread count below 1.
   *
   * @throws IllegalArgumentException {@code commitThreads=<n>: a committer needs at least 1 thread}
   */
  static int checkThreads(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException(
          "commitThreads=" + threads + ": a committer needs at least 1 thread");
    }
    return threads;
  }

  /**
   * The threads of a round's bronze commits unless given: the processors of the worker, at least 2
   * (a bronze commit waits on its log's file system part of the time).
   */
  static int defaultThreads() {
    return Math.max(2, Runtime.getRuntime().availableProcessors());
  }

  /**
   * Commits a round: see the class comment. Each member's outcome goes to {@code out}, in the
   * round's order, once its verdict moved.
   *
   * @param finalizations the verdict keeper of each control table (by path) of the members
   * @throws RuntimeException the failure of the first member (in the round's order) whose bronze
   *     commit failed, once every bronze commit of the round has ended; nothing after the bronze
   *     commits is then made (each landed one is at most one batch ahead of facts, as after a crash
   *     of one batch)
   */
  void commit(
      List<Member> members, Map<String, Finalization> finalizations, Consumer<CommittedBatch> out) {
    List<BatchCommitter.Bronze> bronze = commitBronze(members);
    List<BatchCommitter.Staged> round = new ArrayList<>(members.size());
    for (int i = 0; i < members.size(); i++) {
      round.add(members.get(i).committer().afterBronze(bronze.get(i)));
    }
    Map<String, List<BatchCommitter.Staged>> byFacts = new LinkedHashMap<>();
    for (BatchCommitter.Staged staged : round) {
      byFacts.computeIfAbsent(staged.factsPath(), k -> new ArrayList<>()).add(staged);
    }
    for (Map.Entry<String, List<BatchCommitter.Staged>> e : byFacts.entrySet()) {
      List<GroupedAppend> appends = new ArrayList<>();
      for (BatchCommitter.Staged staged : e.getValue()) {
        appends.add(staged.factsAppend());
      }
      e.getValue().get(0).tables().appendRound(e.getKey(), appends);
    }
    Map<String, List<Finalization.Advance>> byControl = new LinkedHashMap<>();
    for (BatchCommitter.Staged staged : round) {
      byControl
          .computeIfAbsent(staged.controlPath(), k -> new ArrayList<>())
          .add(staged.committer.afterFacts(staged));
    }
    Map<String, LocalDateTime> verdicts = new HashMap<>();
    for (Map.Entry<String, List<Finalization.Advance>> e : byControl.entrySet()) {
      verdicts.putAll(finalizations.get(e.getKey()).advanceAll(e.getValue()));
    }
    for (BatchCommitter.Staged staged : round) {
      out.accept(staged.committer.finish(staged, verdicts.get(staged.bronzePath())));
    }
  }

  /** The members' bronze commits, at once on the pool, their outcomes in the round's order. */
  private List<BatchCommitter.Bronze> commitBronze(List<Member> members) {
    List<BatchCommitter.Bronze> done = new ArrayList<>(members.size());
    if (members.size() == 1 || pool == null) {
      for (Member each : members) {
        done.add(each.commitBronze());
      }
      return done;
    }
    List<Future<BatchCommitter.Bronze>> running = new ArrayList<>(members.size());
    for (Member each : members) {
      running.add(pool.submit(each::commitBronze));
    }
    Throwable first = null;
    for (Future<BatchCommitter.Bronze> each : running) {
      try {
        done.add(each.get());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted in a committer round's bronze commits", e);
      } catch (ExecutionException e) {
        if (first == null) {
          first = e.getCause();
        }
      }
    }
    if (first instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (first instanceof Error error) {
      throw error;
    }
    if (first != null) {
      throw new IllegalStateException("A bronze commit of a committer round failed", first);
    }
    return done;
  }

  /** Stops the round's threads. */
  @Override
  public void close() {
    if (pool != null) {
      pool.shutdown();
      pool = null;
    }
  }
}
