package org.lakecdc.transforms.bronze;

import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Where and how one stream is written: the three tables, the job's identity and the position the
 * run starts from. Serializable; shipped with the write transforms.
 *
 * @param bronzePath path or URI of the bronze table (also the target's name in facts and control)
 * @param factsPath path or URI of the facts table (may be shared by several streams)
 * @param controlPath path or URI of the control table (may be shared)
 * @param start the position the run starts from (its batch id + 1 is the first batch's number)
 * @param granularity the verdict's period
 * @param runStartedAt when the run started (UTC), for {@code started_at}
 * @param crash crash tests only: where a batch's commits stop and what is thrown there ({@link
 *     CrashPlan}), or null
 * @param hadoopConf the Hadoop configuration every table of the target is opened with, on every
 *     worker ({@link #tables()}); its secret values never appear in {@link #toString()}
 * @param afterCommit tests only: run after each batch is fully committed, or null
 */
public record DeltaTarget(
    String bronzePath,
    String factsPath,
    String controlPath,
    StreamPosition start,
    Granularity granularity,
    Instant runStartedAt,
    @Nullable CrashPlan crash,
    HadoopConf hadoopConf,
    @Nullable CommitHook afterCommit)
    implements Serializable {
  public DeltaTarget {
    Objects.requireNonNull(hadoopConf, "hadoopConf");
    Objects.requireNonNull(bronzePath, "bronzePath");
    Objects.requireNonNull(factsPath, "factsPath");
    Objects.requireNonNull(controlPath, "controlPath");
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(granularity, "granularity");
    Objects.requireNonNull(runStartedAt, "runStartedAt");
  }

  /**
   * The Delta tables of this target, opened with its Hadoop configuration: what every {@code DoFn}
   * that writes or commits the target calls in its {@code @Setup} (not serializable: one per DoFn
   * instance).
   */
  public DeltaTables tables() {
    return hadoopConf.tables();
  }

  /**
   * The batch number of this run's batch {@code sequence} (the read's batches numbered from 0):
   * {@code start.batchId + 1 + sequence}, so that the first batch of a run follows the last batch
   * the start position recorded. The bronze sink, the committers and the facts all number a batch
   * with this method.
   *
   * @param sequence the batch's sequence in this run, from 0
   * @return the batch number, the bronze commit's transaction version
   */
  public long batchId(long sequence) {
    return start.batchId() + 1 + sequence;
  }

  /** The job's app id: the bronze transaction app id. */
  public String appId() {
    return start.appId();
  }

  /**
   * The facts transaction app id of batch rows: {@code <appId>#facts@<bronze table id>} ({@link
   * StreamPosition#factsAppId}).
   */
  public String factsAppId() {
    return start.factsAppId();
  }

  /** The same target, stopping where {@code plan} says (crash tests; null: never). */
  public DeltaTarget withCrash(@Nullable CrashPlan plan) {
    return with(plan, afterCommit);
  }

  /** The same target, running {@code hook} after each batch is fully committed (tests). */
  public DeltaTarget withAfterCommit(@Nullable CommitHook hook) {
    return with(crash, hook);
  }

  private DeltaTarget with(@Nullable CrashPlan plan, @Nullable CommitHook hook) {
    return new DeltaTarget(
        bronzePath,
        factsPath,
        controlPath,
        start,
        granularity,
        runStartedAt,
        plan,
        hadoopConf,
        hook);
  }

  /** Runs the test hook, if any, after batch {@code batch} is fully committed. */
  void committed(long batch) {
    if (afterCommit != null) {
      afterCommit.committed(batch);
    }
  }
}
