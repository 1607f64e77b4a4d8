package org.lakecdc.pipelines.targets;

import java.io.Serializable;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * What follows the commit of a whole snapshot the pipeline read: its facts event ({@code bootstrap}
 * for a new target, {@link BootstrapFact}; {@code resnapshot} for a re-snapshot into a later
 * generation, {@link ResnapshotEvent}), written once by the step after the commit, or, when the
 * commit was refused because CDC cleanup purged the changes right after S, the {@link
 * DataLossError} that says so. Serializable, so that a worker can write it.
 */
public interface SnapshotEvent extends Serializable {
  /**
   * The app id a refused snapshot's {@code table_failed} row is recorded under: the target's (a
   * bootstrap) or the new generation's ({@code <appId>.g<n>}, a re-snapshot).
   */
  String appId();

  /** The bronze table's path or URI, normalized. */
  String bronze();

  /** The facts table's path or URI, normalized. */
  String facts();

  /** The capture instance the target reads. */
  String captureInstance();

  /** The source, asked whether CDC still holds the changes after S. */
  CdcClientFactory clientFactory();

  /** Whether the event is already in the facts table. */
  boolean written(DeltaTables tables);

  /**
   * Appends the event of {@code record} (the committed snapshot record) with {@code rows} (null:
   * unknown), once: a second write is skipped by the event's Delta transaction id.
   */
  void write(DeltaTables tables, WriteSnapshotToDelta.SnapshotRecord record, @Nullable Long rows);

  /**
   * The error of the snapshot at {@code s} whose commit was refused because CDC cleanup purged the
   * changes right after S (nothing of it is in bronze), after recording what the next attempt needs
   * (a re-snapshot's {@code resnapshot_failed} row, once).
   *
   * @param firstMissing the first change LSN after S
   * @param minLsn the capture instance's {@code min_lsn} when the commit was refused
   */
  DataLossError refused(DeltaTables tables, Lsn s, Lsn firstMissing, Lsn minLsn);
}
