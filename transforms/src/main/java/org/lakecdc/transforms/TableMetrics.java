package org.lakecdc.transforms;

/**
 * The names of the per-table Beam metrics the pipelines report, which the runner's metrics system
 * exports (Flink's reporters, e.g. Prometheus; Spark's metrics system; the DirectRunner's result):
 * each table's metrics are in the namespace {@code lakecdc.table.<app id>}.
 *
 * <ul>
 *   <li>{@value #COMMITTED_BATCHES}, {@value #COMMITTED_ROWS}, {@value #COMMITTED_INSERTS}, {@value
 *       #COMMITTED_UPDATES}, {@value #COMMITTED_DELETES}: counters of the batches the table's
 *       committer committed in this run and of their change rows (a batch found already committed,
 *       a replay after a restart, is not counted);
 *   <li>{@value #SKIPPED_BATCHES}, {@value #SKIPPED_ROWS}: counters of the batches the table's
 *       committer found already committed in this run (by an earlier or a concurrent run, or an
 *       earlier attempt: their bronze commit was skipped) and of the change rows this run read for
 *       them;
 *   <li>{@value #BYTES_WRITTEN}: counter of the bytes of the data files committed to bronze;
 *   <li>{@value #COMMIT_DURATION_MS}: distribution of a batch's commit time in milliseconds, from
 *       the committer taking it to its verdict written (bronze, facts, control);
 *   <li>{@value #CAPTURE_LAG_SECONDS}: gauge of the last batch's capture lag in seconds (its facts
 *       row's {@code capture_lag_seconds});
 *   <li>{@value #FINALIZED_UNTIL_SECONDS}: gauge of the verdict {@code finalized_until} after the
 *       last batch, in Unix seconds (UTC): now minus it is how old the verdict is;
 *   <li>{@value #FAILURES}: counter of the failures that stopped the table alone ({@code
 *       table_failed} facts rows written).
 * </ul>
 */
public final class TableMetrics {
  public static final String COMMITTED_BATCHES = "committed_batches";
  public static final String COMMITTED_ROWS = "committed_rows";
  public static final String COMMITTED_INSERTS = "committed_inserts";
  public static final String COMMITTED_UPDATES = "committed_updates";
  public static final String COMMITTED_DELETES = "committed_deletes";
  public static final String SKIPPED_BATCHES = "skipped_batches";
  public static final String SKIPPED_ROWS = "skipped_rows";
  public static final String BYTES_WRITTEN = "bytes_written";
  public static final String COMMIT_DURATION_MS = "commit_duration_ms";
  public static final String CAPTURE_LAG_SECONDS = "capture_lag_seconds";
  public static final String FINALIZED_UNTIL_SECONDS = "finalized_until_seconds";
  public static final String FAILURES = "failures";

  private TableMetrics() {}

  /** The namespace of the metrics of the table whose app id is {@code appId}. */
  public static String namespace(String appId) {
    return "lakecdc.table." + appId;
  }
}
