package org.lakecdc.transforms.reconcile;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * What one reconcile compares and how (docs/behaviour.md §11.1, docs/options.md "Reconcile").
 *
 * @param source the source's client factory (the simulator or SQL Server)
 * @param captureInstance the capture instance whose table silver holds
 * @param captureInstances every capture instance of the source table, oldest first (the pieces of
 *     the change-table read for keys in flight)
 * @param sourceSchema the source table's schema
 * @param sourceTable the source table's name
 * @param bronze the bronze table silver was applied from (keys in flight)
 * @param silver the silver table
 * @param report the report table
 * @param facts the facts table of bronze's chunked snapshots (chunk checks), or null for none
 * @param keys silver's key columns, in order, as silver spells them
 * @param computed the captured columns that are computed at the source (never compared)
 * @param bucketRows rows per bucket, at least 1
 * @param sample fraction of matching buckets also compared row by row, 0 to 1
 * @param seed the sample's random seed
 * @param isolation the isolation level of every source read
 * @param hadoopConf the Delta tables' Hadoop configuration
 */
public record ReconcileSpec(
    CdcClientFactory source,
    String captureInstance,
    List<String> captureInstances,
    String sourceSchema,
    String sourceTable,
    String bronze,
    String silver,
    String report,
    @Nullable String facts,
    List<String> keys,
    List<String> computed,
    long bucketRows,
    double sample,
    long seed,
    IsolationLevel isolation,
    HadoopConf hadoopConf)
    implements Serializable {
  public ReconcileSpec {
    Objects.requireNonNull(source, "source");
    captureInstances = List.copyOf(captureInstances);
    keys = List.copyOf(keys);
    computed = List.copyOf(computed);
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("Reconcile needs at least one key column");
    }
    if (bucketRows < 1 || !(sample >= 0 && sample <= 1)) {
      throw new IllegalArgumentException(
          "bucketRows must be at least 1, and sample between 0 and 1, not "
              + bucketRows
              + " and "
              + sample);
    }
  }

  /** The column among {@code names} equal to {@code name} ignoring case, or null. */
  static @Nullable String find(List<String> names, String name) {
    for (String n : names) {
      if (n.equalsIgnoreCase(name)) {
        return n;
      }
    }
    return null;
  }
}
