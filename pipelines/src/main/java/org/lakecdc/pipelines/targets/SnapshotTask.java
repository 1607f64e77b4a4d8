package org.lakecdc.pipelines.targets;

import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * A whole snapshot that the pipeline reads, planned on the launcher: a new target's bootstrap
 * snapshot ({@link Bootstrap#open}) or a re-snapshot into a new generation after data loss ({@link
 * Resnapshot}). S and its commit time are recorded and the {@code snapshot_open} facts row is
 * written; no row is read there. The pipeline reads the table, commits the snapshot, writes its
 * {@link #event} and only then starts the table's stream at {@link #atS}.
 *
 * @param target the target writing the snapshot (a re-snapshot's: in its new generation)
 * @param atS the position at S (batch -1, end LSN S and its commit time, the snapshot's
 *     generation), of the target's bronze
 * @param resnapshot a re-snapshot's {@code resnapshot} event, or null for a bootstrap snapshot
 */
public record SnapshotTask(
    Target target, StreamPosition atS, @Nullable ResnapshotEvent resnapshot) {

  /** A new target's bootstrap snapshot. */
  public SnapshotTask(Target target, StreamPosition atS) {
    this(target, atS, null);
  }

  /**
   * The snapshot's read and commit for the pipeline: the table read in key ranges, every row
   * stamped with S, written to bronze in one commit that records S and {@link #atS}, made only
   * while CDC still holds the changes right after S; a refused commit outputs {@link
   * WriteSnapshotToDelta#NOT_COMMITTED} instead of failing the pipeline.
   */
  public WriteSnapshotToDelta.FromSnapshot write() {
    return WriteSnapshotToDelta.from(Bootstrap.snapshotRead(target))
        .to(target.bronze(), atS)
        .withHadoopConf(target.config().hadoopConf())
        .withRowListener(SnapshotProgress.listener(target.captureInstance()))
        .withRetentionCheck(target.config().clientFactory(), target.captureInstance())
        .withRefusalAsOutput();
  }

  /**
   * The facts event written after the snapshot's commit: the {@code bootstrap} event ({@link
   * BootstrapFact}), or a re-snapshot's {@code resnapshot} event.
   */
  public SnapshotEvent event() {
    return resnapshot != null ? resnapshot : BootstrapFact.of(target, atS);
  }
}
