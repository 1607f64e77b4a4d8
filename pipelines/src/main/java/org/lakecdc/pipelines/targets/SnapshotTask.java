package org.lakecdc.pipelines.targets;

import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * The bootstrap snapshot of a new target that the pipeline reads, planned on the launcher ({@link
 * Bootstrap#open}): S and its commit time are recorded and the {@code snapshot_open} facts row is
 * written; no row is read there. The pipeline reads the table, commits the snapshot and only then
 * starts the table's stream at {@link #atS}.
 *
 * @param target the new target
 * @param atS the position at S (batch -1, end LSN S and its commit time), of the target's bronze
 */
public record SnapshotTask(Target target, StreamPosition atS) {

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

  /** The {@code bootstrap} facts event written after the snapshot's commit. */
  public BootstrapFact fact() {
    return BootstrapFact.of(target, atS);
  }
}
