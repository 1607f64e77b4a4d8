package org.lakecdc.pipelines.targets;

import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.lakecdc.transforms.TableMetrics;
import org.lakecdc.transforms.bronze.BatchStats;
import org.lakecdc.transforms.bronze.CommittedBatch;

/**
 * The run's Beam counters of committed batches, which the runner's metrics system exports (the
 * run's summary itself counts the facts rows the run committed, {@link RunFacts}): {@link #count()}
 * counts the batches the committer emits (one {@link CommittedBatch} per batch it committed; a
 * batch found already in the tables, a replay, is not counted) into the counters {@code
 * lakecdc/committed_batches}, {@code lakecdc/committed_rows}, {@code lakecdc/committed_inserts},
 * {@code lakecdc/committed_updates} and {@code lakecdc/committed_deletes}, the batches it found
 * already committed (replays, whose bronze commit it skipped) into {@code lakecdc/skipped_batches}
 * and {@code lakecdc/skipped_rows}, and each per table under {@code lakecdc.table.<appId>}; {@link
 * #batches}, {@link #rowsByOperation}, {@link #skippedBatches} and {@link #skippedRows} read them
 * from the finished pipeline's result: committed values where the runner has them (DirectRunner),
 * attempted ones otherwise (Spark, Flink), which on a cluster lack the counts of a task attempt
 * whose worker died.
 */
public final class RunCounters {
  static final String NAMESPACE = "lakecdc";
  static final String BATCHES = TableMetrics.COMMITTED_BATCHES;
  static final String ROWS = TableMetrics.COMMITTED_ROWS;
  static final String INSERTS = TableMetrics.COMMITTED_INSERTS;
  static final String UPDATES = TableMetrics.COMMITTED_UPDATES;
  static final String DELETES = TableMetrics.COMMITTED_DELETES;
  static final String SKIPPED_BATCHES = TableMetrics.SKIPPED_BATCHES;
  static final String SKIPPED_ROWS = TableMetrics.SKIPPED_ROWS;

  /**
   * Per table: snapshots the run read and found already committed (another run of the target, or an
   * earlier attempt of a retried task, committed the snapshot of the same S first).
   */
  static final String SNAPSHOTS_FOUND_WRITTEN = "snapshots_found_written";

  private RunCounters() {}

  /** Counts the committed batches into the counters; outputs nothing. */
  public static PTransform<PCollection<CommittedBatch>, PCollection<Void>> count() {
    return new PTransform<>("Count committed batches") {
      @Override
      public PCollection<Void> expand(PCollection<CommittedBatch> committed) {
        return committed.apply(ParDo.of(new CountFn()));
      }
    };
  }

  private static final class CountFn extends DoFn<CommittedBatch, Void> {
    private final Counter batches = Metrics.counter(NAMESPACE, BATCHES);
    private final Counter rows = Metrics.counter(NAMESPACE, ROWS);
    private final Counter inserts = Metrics.counter(NAMESPACE, INSERTS);
    private final Counter updates = Metrics.counter(NAMESPACE, UPDATES);
    private final Counter deletes = Metrics.counter(NAMESPACE, DELETES);
    private final Counter skippedBatches = Metrics.counter(NAMESPACE, SKIPPED_BATCHES);
    private final Counter skippedRows = Metrics.counter(NAMESPACE, SKIPPED_ROWS);

    @ProcessElement
    public void process(@Element CommittedBatch batch) {
      BatchStats stats = batch.stats();
      if (batch.failed()) {
        return;
      }
      if (batch.skipped()) {
        skippedBatches.inc();
        skippedRows.inc(stats.rows());
        String table = tableNamespace(batch.appId());
        Metrics.counter(table, SKIPPED_BATCHES).inc();
        Metrics.counter(table, SKIPPED_ROWS).inc(stats.rows());
        return;
      }
      batches.inc();
      rows.inc(stats.rows());
      inserts.inc(stats.inserts());
      updates.inc(stats.updates());
      deletes.inc(stats.deletes());
      String table = tableNamespace(batch.appId());
      Metrics.counter(table, BATCHES).inc();
      Metrics.counter(table, ROWS).inc(stats.rows());
      Metrics.counter(table, INSERTS).inc(stats.inserts());
      Metrics.counter(table, UPDATES).inc(stats.updates());
      Metrics.counter(table, DELETES).inc(stats.deletes());
    }
  }

  /** The namespace of one table's counters: {@code lakecdc.table.<appId>}. */
  public static String tableNamespace(String appId) {
    return TableMetrics.namespace(appId);
  }

  /** The batches the pipeline committed. */
  public static long batches(PipelineResult result) {
    return counter(result, BATCHES);
  }

  /** The batches the pipeline found already committed (replays, their bronze commit skipped). */
  public static long skippedBatches(PipelineResult result) {
    return counter(result, SKIPPED_BATCHES);
  }

  /** {@link #skippedBatches(PipelineResult)} of the table of {@code appId}. */
  public static long skippedBatches(PipelineResult result, String appId) {
    return counter(result, tableNamespace(appId), SKIPPED_BATCHES);
  }

  /** The change rows the pipeline read for the batches it found already committed. */
  public static long skippedRows(PipelineResult result) {
    return counter(result, SKIPPED_ROWS);
  }

  /** {@link #skippedRows(PipelineResult)} of the table of {@code appId}. */
  public static long skippedRows(PipelineResult result, String appId) {
    return counter(result, tableNamespace(appId), SKIPPED_ROWS);
  }

  /**
   * Counts a snapshot of the table of {@code appId} (its generation's app id) that the pipeline
   * read and found already committed: its commit skipped. Called where the pipeline runs.
   */
  public static void snapshotFoundWritten(String appId) {
    Metrics.counter(tableNamespace(appId), SNAPSHOTS_FOUND_WRITTEN).inc();
  }

  /**
   * Whether the pipeline found a snapshot of the table of {@code appId} already committed ({@link
   * #snapshotFoundWritten}).
   */
  public static boolean snapshotFoundWritten(PipelineResult result, String appId) {
    return counter(result, tableNamespace(appId), SNAPSHOTS_FOUND_WRITTEN) > 0;
  }

  /** The batches the pipeline committed for the table of {@code appId}. */
  public static long batches(PipelineResult result, String appId) {
    return counter(result, tableNamespace(appId), BATCHES);
  }

  /** {@link #rowsByOperation(PipelineResult)} of the table of {@code appId}. */
  public static Map<String, Long> rowsByOperation(PipelineResult result, String appId) {
    Map<String, Long> byOperation = new TreeMap<>();
    if (batches(result, appId) == 0) {
      return byOperation;
    }
    String table = tableNamespace(appId);
    byOperation.put("rows", counter(result, table, ROWS));
    byOperation.put("insert", counter(result, table, INSERTS));
    byOperation.put("update", counter(result, table, UPDATES));
    byOperation.put("delete", counter(result, table, DELETES));
    return byOperation;
  }

  /**
   * The change rows the pipeline committed, as the summary holds them: {@code rows}, {@code
   * insert}, {@code update} (after-images) and {@code delete}; empty when it committed no batch.
   */
  public static Map<String, Long> rowsByOperation(PipelineResult result) {
    Map<String, Long> byOperation = new TreeMap<>();
    if (batches(result) == 0) {
      return byOperation;
    }
    byOperation.put("rows", counter(result, ROWS));
    byOperation.put("insert", counter(result, INSERTS));
    byOperation.put("update", counter(result, UPDATES));
    byOperation.put("delete", counter(result, DELETES));
    return byOperation;
  }

  /** The counter's value summed over the steps that report it; 0 when none does. */
  public static long counter(PipelineResult result, String name) {
    return counter(result, NAMESPACE, name);
  }

  /** The counter {@code namespace/name} summed over the steps that report it; 0 when none does. */
  public static long counter(PipelineResult result, String namespace, String name) {
    MetricQueryResults metrics =
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.named(namespace, name))
                    .build());
    long sum = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      sum += value(counter);
    }
    return sum;
  }

  private static long value(MetricResult<Long> counter) {
    try {
      Long committed = counter.getCommitted();
      if (committed != null) {
        return committed;
      }
    } catch (UnsupportedOperationException e) {
      // The runner has attempted values only (Spark, Flink): what the run did, retries included.
    }
    Long attempted = counter.getAttempted();
    return attempted == null ? 0 : attempted;
  }
}
