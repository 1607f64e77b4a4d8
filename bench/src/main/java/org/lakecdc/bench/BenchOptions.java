package org.lakecdc.bench;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Options of {@link Bench}, given as {@code --name=value} (Beam's {@link PipelineOptions} parser;
 * an unknown option is refused). docs/performance.md describes each measurement.
 */
public interface BenchOptions extends PipelineOptions {
  /** Orders inserted into the simulator's table: the rows every throughput figure moves. */
  @Description("Rows (orders) inserted into the simulator's table and moved by every measurement")
  @Default.Long(1_000_000)
  long getRows();

  void setRows(long value);

  /** Inserts per source transaction; 0 puts every row in one transaction. */
  @Description("Inserts per source transaction (default 1000); 0: all rows in one transaction")
  @Default.Integer(1000)
  int getRowsPerTransaction();

  void setRowsPerTransaction(int value);

  /** {@code direct}, or {@code all} to also run the job on the SparkRunner and the FlinkRunner. */
  @Description("direct (the DirectRunner) or all (also the SparkRunner and the FlinkRunner)")
  @Default.String("direct")
  String getRunners();

  void setRunners(String value);

  /**
   * The work directory: built databases (reused by later runs with the same rows and rows per
   * transaction) and each measurement's tables and logs. Default {@code bench/target/bench-work}.
   */
  @Description("Work directory (databases are cached here); default bench/target/bench-work")
  String getWorkDir();

  void setWorkDir(String value);

  /**
   * Measurements to leave out, comma-separated: {@code bronze}, {@code parquet}, {@code
   * deltaspark}, {@code overhead}, {@code heap}, {@code latency}, {@code silver}, {@code
   * deltasparkmerge}, {@code reconcile}, {@code s3}, {@code parquetio}, {@code manytables}, {@code
   * snapshot}, {@code history}; their figures are not printed, nor the ratios that need them
   * ({@code silver} also leaves out the delta-spark MERGE, {@code bronze} also the snapshot
   * figures, {@code deltasparkmerge} both delta-spark MERGEs: silver's and the history's).
   */
  @Description(
      "Comma-separated measurements to skip: bronze, parquet, deltaspark, overhead, heap, latency,"
          + " silver, deltasparkmerge, reconcile, s3, parquetio, manytables, snapshot, history")
  @Default.String("")
  String getSkip();

  void setSkip(String value);

  /** Runs of each throughput measurement (bronze, parquet, delta-spark); the median is printed. */
  @Description("Runs of each throughput measurement; the figure is their median")
  @Default.Integer(1)
  int getRepeats();

  void setRepeats(int value);

  /** Commits of one row each for the per-batch fixed cost (at least 2). */
  @Description("Commits of one row each for batch_overhead_ms (at least 2)")
  @Default.Integer(300)
  int getOverheadCommits();

  void setOverheadCommits(int value);

  /** Transactions committed one by one in continuous mode (the issue asks for at least 20). */
  @Description("Transactions committed one by one for the latency figures (at least 1; 20+ meant)")
  @Default.Integer(20)
  int getLatencyTransactions();

  void setLatencyTransactions(int value);

  /** The job JVM's maximum heap ({@code -Xmx} value). */
  @Description("Maximum heap of the job's JVM, as -Xmx takes it")
  @Default.String("8g")
  String getJobHeap();

  void setJobHeap(String value);

  /**
   * More options of the job's JVMs (every run of the main job, after {@code -Xmx}), one per
   * comma-separated item, e.g. {@code -XX:TieredStopAtLevel=1,-XX:+UseSerialGC}: to measure the
   * flags a user would start {@code java -cp ... CdcToDelta} with. None by default: the job runs as
   * {@code mvn exec:java} and {@code java -cp} run it without flags.
   */
  @Description(
      "More JVM options of the job's JVMs, comma-separated, each starting with '-' (default: none)")
  java.util.List<String> getJobJvmOptions();

  void setJobJvmOptions(java.util.List<String> value);

  /**
   * The large sizes: silver tables of 5,000,000 and 1,000,000 rows with waves of 50,000 keys, a
   * Reconcile table of 5,000,000 rows, 500 tables for the many-tables figures and a history of
   * 1,000,000 keys, instead of 1,000,000, 200,000, 10,000, 200,000, 50 and 100,000. An option given
   * explicitly wins.
   */
  @Description(
      "Large sizes: silver 5M/1M rows and 50,000-key waves, reconcile 5M rows, 500 tables, history"
          + " 1M keys (default: 1M/200k, 10,000, 200k, 50, 100k)")
  @Default.Boolean(false)
  boolean getLarge();

  void setLarge(boolean value);

  /**
   * Rows of the silver table the headline wave figures merge into (dense integer keys); default
   * 1,000,000 (5,000,000 with {@code --large}).
   */
  @Description(
      "Rows of the silver table of silver_wave_s, silver_wave_s_5m and the cold wave (default 1M;"
          + " 5M with --large)")
  Long getSilverRows();

  void setSilverRows(Long value);

  /**
   * Rows of the smaller silver table of {@code silver_wave_s_1m} (the same waves' size); default
   * 200,000 (1,000,000 with {@code --large}).
   */
  @Description(
      "Rows of the smaller silver table of silver_wave_s_1m (default 200k; 1M with --large)")
  Long getSilverSmallRows();

  void setSilverSmallRows(Long value);

  /**
   * Keys each silver wave changes: 80% updates, 9% deletes, 11% inserts of new keys; default 1% of
   * the large table (10,000; 50,000 with {@code --large}).
   */
  @Description(
      "Keys per silver wave (80% updates, 9% deletes, 11% inserts); default 10,000 (50,000 with"
          + " --large)")
  Integer getSilverWaveKeys();

  void setSilverWaveKeys(Integer value);

  /**
   * Warm silver waves measured (the figures are their median), after the cold first wave and one
   * warm-up wave.
   */
  @Description("Warm silver waves measured per table (after a cold and a warm-up wave); median")
  @Default.Integer(5)
  int getSilverWaves();

  void setSilverWaves(int value);

  /**
   * Rows of the source table and of the silver table Reconcile proves (10 differences planted);
   * from 20 to {@code Integer.MAX_VALUE / 2}; default 200,000 (5,000,000 with {@code --large}).
   */
  @Description(
      "Rows of the table of reconcile_rows_per_s (10 differences planted); default 200k (5M with"
          + " --large)")
  Long getReconcileRows();

  void setReconcileRows(Long value);

  /**
   * Tables of the many-tables figures: one pipeline streams {@value ManyTables#TRANSACTIONS}
   * one-row transactions of each; default 50 (500 with {@code --large}).
   */
  @Description("Tables of the many-tables figures (default 50; 500 with --large)")
  Integer getTables();

  void setTables(Integer value);

  /**
   * A file for a flight recording (JFR, the JDK's {@code profile} settings) of the large table's
   * warm silver waves, taken in its silver JVM; none when unset.
   */
  @Description("A JFR file: records the large silver table's warm waves in its JVM (profiling)")
  String getSilverJfr();

  void setSilverJfr(String value);

  /**
   * Keys of the history table of {@code history_wave_s}, each with five versions; default 100,000
   * (1,000,000 with {@code --large}). Each wave updates 1% of them.
   */
  @Description(
      "Keys of the history table of history_wave_s, 5 versions each, waves of 1% (default 100k;"
          + " 1M with --large)")
  Long getHistoryKeys();

  void setHistoryKeys(Long value);

  /**
   * Warm history waves measured (the figure is their median), after the cold first wave and one
   * warm-up wave.
   */
  @Description("Warm history waves measured (after a cold and a warm-up wave); median")
  @Default.Integer(5)
  int getHistoryWaves();

  void setHistoryWaves(int value);
}
