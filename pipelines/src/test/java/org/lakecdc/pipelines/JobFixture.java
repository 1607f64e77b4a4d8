package org.lakecdc.pipelines;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * A source database ({@code dbo.orders} of docs/scenarios.md: {@code order_id int, status
 * varchar(20), amount decimal(18,2), updated_at datetime2(7)}, capture instance {@code dbo_orders},
 * T0 = 2026-09-28T13:50:00Z) and the job's three Delta tables, in one temporary directory.
 */
public final class JobFixture {
  public static final String CI = "dbo_orders";
  public static final String ORDERS = "dbo.orders";
  static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  final Path dir;
  public final FakeSqlServer db;
  public final DeltaTables tables;
  public final String bronze;
  public final String facts;
  public final String control;

  public JobFixture(Path dir) {
    this(dir, dir.resolve("delta").toString(), DeltaTables.create());
  }

  /**
   * The source in {@code dir}, the tables under {@code tableRoot} (a local directory or a URI such
   * as {@code s3a://lake/job}), read with {@code tables}.
   */
  public JobFixture(Path dir, String tableRoot, DeltaTables tables) {
    this.dir = dir;
    this.tables = tables;
    this.db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        ORDERS,
        List.of(
            ColumnDefinition.of("order_id", "int"),
            ColumnDefinition.of("status", "varchar(20)"),
            ColumnDefinition.of("amount", "decimal(18,2)"),
            ColumnDefinition.of("updated_at", "datetime2(7)")),
        List.of("order_id"));
    this.bronze = tableRoot + "/dbo_orders";
    this.facts = tableRoot + "/facts";
    this.control = tableRoot + "/table_finalization";
  }

  /** T0 plus {@code minutes}. */
  public static Instant at(long minutes) {
    return T0.plusSeconds(60 * minutes);
  }

  public static Map<String, Object> order(int id, String status, String amount) {
    Map<String, Object> row = new HashMap<>();
    row.put("order_id", id);
    row.put("status", status);
    row.put("amount", new BigDecimal(amount));
    return row;
  }

  /** Commit {@code t} (0-based) at T0 + t minutes inserting orders t*100 .. t*100+n-1. */
  void insertCommit(int t, int n) {
    FakeSqlServer.Transaction tx = db.transaction(at(t));
    for (int i = 0; i < n; i++) {
      tx.insert(ORDERS, order(t * 100 + i, "new", (t * 100 + i) + ".00"));
    }
    tx.commit();
  }

  public JobConfig config() {
    return JobConfig.builder(db.clientFactory(), CI, bronze, facts, control)
        .bootstrap(false)
        .maxCommitsPerBatch(4)
        .build();
  }

  public static PipelineOptions direct() {
    PipelineOptions options = PipelineOptionsFactory.create();
    options.setRunner(DirectRunner.class);
    return options;
  }

  /** Runs the job and returns its summary; its printed output goes to {@link #lastOutput}. */
  public JobSummary run(JobConfig config) {
    return run(config, direct(), () -> {});
  }

  /**
   * Runs the job on the runner of {@code options}, calling {@code beforeStream} once S is recorded,
   * before the pipeline reads the snapshot and the changes; its printed output goes to {@link
   * #lastOutput}.
   */
  public JobSummary run(JobConfig config, PipelineOptions options, Runnable beforeStream) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      try {
        return CdcToDeltaJob.run(config, options, out, beforeStream);
      } finally {
        lastOutput = bytes.toString(StandardCharsets.UTF_8);
      }
    }
  }

  public String lastOutput = "";

  /**
   * Starts the job in another thread, following the source continuously (polling every second) for
   * at most {@code runFor} or until {@code stop} is requested; its printed output goes to {@code
   * out}.
   */
  public static java.util.concurrent.CompletableFuture<JobSummary> following(
      JobConfig config,
      PipelineOptions options,
      PrintStream out,
      java.time.Duration runFor,
      org.lakecdc.pipelines.cdc.ContinuousMode.Stop stop) {
    return java.util.concurrent.CompletableFuture.supplyAsync(
        () ->
            CdcToDeltaJob.runContinuously(
                config,
                options,
                out,
                () -> {},
                new org.lakecdc.pipelines.cdc.Continuous(
                    org.lakecdc.pipelines.cdc.Continuous.Form.STREAM,
                    java.time.Duration.ofSeconds(1),
                    runFor,
                    stop)));
  }

  public JobSummary run() {
    return run(config());
  }

  public JobSummary runCrashing(CrashPoint point, long batch) {
    return run(config().withCrash(point, batch));
  }

  /** Bronze rows in the change order, as "lsn/seqval/op/order_id/batch". */
  public List<String> bronzeChanges() {
    List<Row> rows =
        new ArrayList<>(
            tables.scan(
                bronze,
                org.lakecdc.transforms.delta.DeltaColumn.toBeamSchema(
                    tables.describe(bronze).columns())));
    rows.sort(
        Comparator.comparing((Row r) -> r.getString(MetadataColumns.START_LSN))
            .thenComparing(r -> r.getString(MetadataColumns.SEQVAL))
            .thenComparing(r -> r.getInt32(MetadataColumns.OPERATION)));
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(
          r.getString(MetadataColumns.START_LSN)
              + "/"
              + r.getString(MetadataColumns.SEQVAL)
              + "/"
              + r.getInt32(MetadataColumns.OPERATION)
              + "/"
              + r.getInt32("order_id")
              + "/"
              + r.getInt32(MetadataColumns.BATCH_ID));
    }
    return out;
  }

  /** Facts rows of batches (no events), as "batch:rows:end_lsn", in batch order. */
  public List<String> factBatches() {
    List<String> out = new ArrayList<>();
    List<Row> rows = new ArrayList<>(tables.scan(facts, FactsTable.SCHEMA));
    rows.removeIf(r -> r.getString(FactsTable.EVENT) != null);
    rows.sort(Comparator.comparing((Row r) -> r.getInt64(FactsTable.BATCH_ID)));
    for (Row r : rows) {
      out.add(
          r.getInt64(FactsTable.BATCH_ID)
              + ":"
              + r.getInt64(FactsTable.ROWS)
              + ":"
              + r.getString(FactsTable.END_LSN));
    }
    return out;
  }

  /** Facts event names, in table order. */
  List<String> factEvents() {
    List<String> out = new ArrayList<>();
    for (Row r : tables.scan(facts, FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) != null) {
        out.add(r.getString(FactsTable.EVENT));
      }
    }
    return out;
  }

  /**
   * The history most job tests share: ten commits (orders t*100..t*100+2 at T0+t minutes for t =
   * 0..7; an update of order 100 and a delete of order 200 at T0+8; order 900 at T0+9) and one idle
   * entry at T0+2h05.
   */
  public static JobFixture history(Path dir) {
    return history(new JobFixture(dir));
  }

  /** {@link #history(Path)} with the tables under {@code tableRoot}, read with {@code tables}. */
  public static JobFixture history(Path dir, String tableRoot, DeltaTables tables) {
    return history(new JobFixture(dir, tableRoot, tables));
  }

  private static JobFixture history(JobFixture f) {
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 8; t++) {
      f.insertCommit(t, 3);
    }
    f.db
        .transaction(at(8))
        .update(ORDERS, List.of(100), Map.of("status", "paid"))
        .delete(ORDERS, List.of(200))
        .commit();
    f.db.transaction(at(9)).insert(ORDERS, order(900, "new", "9.00")).commit();
    f.db.idle(at(125));
    return f;
  }

  /** Every change row of the source as "lsn/seqval/op/order_id", sorted (bronze without batch). */
  public List<String> sourceChanges() {
    List<String> out = new ArrayList<>();
    try (org.lakecdc.io.mssqlcdc.client.CdcClient client = db.openClient();
        org.lakecdc.io.mssqlcdc.client.CloseableIterator<org.lakecdc.io.mssqlcdc.client.ChangeRow>
            rows =
                client.readChanges(
                    new org.lakecdc.io.mssqlcdc.client.ChangeQuery(
                        CI,
                        org.lakecdc.io.mssqlcdc.lsn.Lsn.ZERO,
                        org.lakecdc.io.mssqlcdc.lsn.Lsn.MAX,
                        List.of("order_id"),
                        true))) {
      rows.forEachRemaining(
          r ->
              out.add(
                  r.startLsn() + "/" + r.seqval() + "/" + r.operation() + "/" + r.values().get(0)));
    }
    out.sort(null);
    return out;
  }
}
