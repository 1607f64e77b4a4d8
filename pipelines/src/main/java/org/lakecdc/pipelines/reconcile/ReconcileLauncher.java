package org.lakecdc.pipelines.reconcile;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.ObjectStores;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.cli.SqlServerSource;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.pipelines.options.ReconcileOptions;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.pipelines.targets.SilverPlan;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.reconcile.BronzeGeneration;
import org.lakecdc.transforms.reconcile.KeyDiff;
import org.lakecdc.transforms.reconcile.Part;
import org.lakecdc.transforms.reconcile.ReconcilePlan;
import org.lakecdc.transforms.reconcile.ReconcileReport;
import org.lakecdc.transforms.reconcile.ReconcileSpec;
import org.lakecdc.transforms.reconcile.Reconciler;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * What the {@code Reconcile} job's entry point ({@code org.lakecdc.pipelines.Reconcile}) delegates
 * to: the checks of its options and tables before anything is written, which resolve the {@link
 * ReconcileSpec} ({@link #check}), then the plan, the Beam pipeline that compares the rows and
 * writes the report, and the summary, JSON or page read back from it ({@link #run}).
 */
public final class ReconcileLauncher {
  private ReconcileLauncher() {}

  /**
   * What the checks resolved, for the run: the spec, the source, the key columns of {@code --keys}
   * (empty: the unique index), the isolation level, silver, bronze, the report and facts tables
   * (normalized) and the Hadoop configuration.
   */
  public record Checked(
      ReconcileSpec spec,
      CdcClientFactory source,
      List<String> keys,
      IsolationLevel isolation,
      String silver,
      String bronze,
      String report,
      String facts,
      HadoopConf conf) {}

  /**
   * Checks the options and the tables before anything is written, and resolves the spec (reading
   * the capture instance and its columns from the source).
   *
   * @param args the command line (which options were given)
   * @throws IllegalArgumentException naming the option, the value and what it accepts
   */
  public static Checked check(ReconcileOptions options, String[] args) {
    ReconcileSpec spec;
    CdcClientFactory source;
    List<String> keys;
    IsolationLevel isolation;
    String silver;
    String bronze;
    String report;
    String facts;
    HadoopConf conf;
    conf = TableReading.conf(options);
    boolean ciGiven = !CommandLine.values(args, "captureInstance").isEmpty();
    String ci = CommandLine.required("captureInstance", options.getCaptureInstance());
    if (options.getSilver() == null) {
      throw new IllegalArgumentException(
          "--silver must name the silver table to reconcile (a path or URI, e.g."
              + " lakecdc-demo/delta/silver/"
              + ci.toLowerCase(Locale.ROOT)
              + ")");
    }
    silver = CommandLine.tablePath("silver", options.getSilver());
    report =
        CommandLine.writableTableLocation(
            "report", CommandLine.tablePath("report", options.getReport()));
    facts = CommandLine.tablePath("factsTable", options.getFactsTable());
    if (options.getBucketRows() < 1) {
      throw new IllegalArgumentException(
          "--bucketRows must be a whole number of rows, at least 1, not '"
              + options.getBucketRows()
              + "'");
    }
    if (!(options.getSample() >= 0 && options.getSample() <= 1)) {
      throw new IllegalArgumentException(
          "--sample must be a number from 0 to 1, not '"
              + CommandLine.typed(options, "sample", options.getSample())
              + "'");
    }
    isolation = options.getIsolationLevel();
    if (options.getHtml() != null && options.getHtml().isBlank()) {
      throw new IllegalArgumentException("--html must name a file, e.g. report.html");
    }
    if (options.getHtml() != null) {
      CommandLine.writableFile("html", options.getHtml());
    }
    keys = CommandLine.keys(options.getKeys());
    source = source(options);
    ObjectStores.check(
        conf,
        silver,
        report,
        facts,
        options.getBronze() == null ? null : CommandLine.tablePath("bronze", options.getBronze()));
    DeltaTables tables = conf.tables();
    if (!tables.exists(silver)) {
      throw new IllegalArgumentException(
          "--silver " + silver + " holds no Delta table: run ApplyChanges (or --silver) first");
    }
    requireReportKind(tables, report);
    if (!CommandLine.values(args, "factsTable").isEmpty()) {
      CommandLine.existingTable(
          tables,
          "factsTable",
          facts,
          null,
          "give the facts table bronze's runs wrote (leave --factsTable out to skip the chunk"
              + " checks)");
    }
    Map<String, String> recorded = tables.describe(silver).properties();
    ci = silverCaptureInstance(source, silver, recorded, ci, ciGiven);
    String recordedBronze = recorded.get(SilverTable.BRONZE);
    if (options.getBronze() != null) {
      bronze = CommandLine.tablePath("bronze", options.getBronze());
      CommandLine.existingTable(
          tables,
          "bronze",
          bronze,
          null,
          "give the bronze table silver was applied from (leave --bronze out to take the one"
              + " silver records)");
    } else if (recordedBronze != null) {
      bronze = recordedBronze;
      // Recorded by the run that applied silver: its store is looked at as the others were.
      ObjectStores.check(conf, bronze);
    } else {
      bronze = CommandLine.tablePath("bronze", "lakecdc-demo/delta/" + ci.toLowerCase(Locale.ROOT));
    }
    List<String> captured =
        SilverTable.capturedColumns(DeltaColumn.toBeamSchema(tables.describe(silver).columns()));
    SilverPlan.Resolved resolved =
        SilverPlan.resolve(
            source,
            ci,
            keys,
            captured,
            "silver " + silver,
            ciGiven
                ? "--captureInstance names another table than silver holds: give the capture"
                    + " instance of silver's table"
                : "silver records no capture instance (it was created before lakecdc recorded"
                    + " one in its table property "
                    + SilverTable.CAPTURE_INSTANCES
                    + "): pass --captureInstance=<the capture instance silver holds> (without"
                    + " it, "
                    + ci
                    + ")");
    try (CdcClient client = source.open()) {
      CaptureInstance instance = client.captureInstances(ci).get(0);
      for (CaptureInstance i : client.captureInstances(ci)) {
        if (i.name().equalsIgnoreCase(ci)) {
          instance = i;
        }
      }
      List<String> computed = new ArrayList<>();
      for (CapturedColumn c : client.capturedColumns(instance.name())) {
        if (c.computed()) {
          computed.add(c.name());
        }
      }
      List<String> instances = new ArrayList<>();
      for (CaptureInstance i : client.captureInstances(ci)) {
        instances.add(i.name());
      }
      spec =
          new ReconcileSpec(
              source,
              instance.name(),
              instances,
              instance.sourceSchema(),
              instance.sourceTable(),
              bronze,
              silver,
              report,
              facts,
              resolved.keys(),
              computed,
              options.getBucketRows(),
              options.getSample(),
              options.getSeed(),
              isolation,
              conf);
    }
    return new Checked(spec, source, keys, isolation, silver, bronze, report, facts, conf);
  }

  /**
   * Plans the run, compares the rows in a Beam pipeline on the chosen runner, appends the run's
   * rows to the report table and prints the summary (or the JSON), and writes the page of {@code
   * --html}.
   *
   * @param out where the summary (or the JSON) goes
   * @return {@link JobExit#OK}, or {@link JobExit#MISMATCH} when silver does not match
   * @throws Exception whatever the run failed with (the entry point turns it into its exit code)
   */
  public static int run(ReconcileOptions options, Checked checked, PrintStream out)
      throws Exception {
    ReconcileSpec spec = checked.spec();
    CdcClientFactory source = checked.source();
    String report = checked.report();
    HadoopConf conf = checked.conf();
    long started = System.nanoTime();
    DeltaTables tables = conf.tables();
    Reconciler reconciler = new Reconciler(tables, Clock.systemUTC());
    ReconcilePlan plan;
    try (CdcClient client = source.open()) {
      plan = reconciler.plan(client, spec);
    }
    Pipeline pipeline = Pipeline.create(options);
    List<Integer> groups = new ArrayList<>();
    for (int i = 0; i < plan.groups().size(); i++) {
      groups.add(i);
    }
    PCollection<String> diffs =
        pipeline
            .apply("Groups of key ranges", Create.of(groups).withCoder(VarIntCoder.of()))
            .apply("Compare rows", ParDo.of(new CompareFn(spec, plan)));
    PCollectionView<List<String>> view = diffs.apply("Differences", View.asList());
    pipeline
        .apply("Run", Create.of(List.of(plan.run().runId())).withCoder(StringUtf8Coder.of()))
        .apply("Write report", ParDo.of(new FinishFn(spec, plan, view)).withSideInputs(view));
    PipelineResult result = JobExit.run(pipeline);
    long compared = RunCounters.counter(result, "reconcile", "rows_compared");
    double seconds = (System.nanoTime() - started) / 1e9;
    BronzeGeneration generation =
        BronzeGeneration.read(
                tables, spec.bronze(), spec.facts(), spec.silver(), plan.run().silverVersion())
            .orElse(null);
    ReconcileResult r =
        ReconcileResult.of(
            plan,
            generation,
            ReconcileReport.read(tables, report, plan.run().runId()),
            compared,
            seconds);
    if (options.getJson()) {
      out.println(r.json(spec));
    } else {
      r.print(spec, out);
    }
    if (options.getHtml() != null) {
      ReconcilePage.write(Path.of(options.getHtml()), spec, r);
      if (!options.getJson()) {
        out.println("  page: " + Path.of(options.getHtml()).toAbsolutePath());
      }
    }
    return r.mismatched() ? JobExit.MISMATCH : JobExit.OK;
  }

  /** Tier 2 of one group of key ranges; emits each difference as {@link KeyDiff#toJson()}. */
  static final class CompareFn extends DoFn<Integer, String> {
    private final ReconcileSpec spec;
    private final ReconcilePlan plan;

    CompareFn(ReconcileSpec spec, ReconcilePlan plan) {
      this.spec = spec;
      this.plan = plan;
    }

    @ProcessElement
    public void process(@Element Integer group, OutputReceiver<String> out) {
      List<Part> parts = plan.groups().get(group);
      try (CdcClient client = spec.source().open()) {
        Reconciler.Compared c =
            new Reconciler(spec.hadoopConf().tables(), Clock.systemUTC())
                .compare(client, spec, plan, parts);
        Metrics.counter("reconcile", "rows_compared").inc(c.sourceRows() + c.silverRows());
        for (KeyDiff d : c.diffs()) {
          out.output(d.toJson());
        }
      }
    }
  }

  /** The end of a run: the keys in flight read again, then the report commit. */
  static final class FinishFn extends DoFn<String, Void> {
    private final ReconcileSpec spec;
    private final ReconcilePlan plan;
    private final PCollectionView<List<String>> diffs;

    FinishFn(ReconcileSpec spec, ReconcilePlan plan, PCollectionView<List<String>> diffs) {
      this.spec = spec;
      this.plan = plan;
      this.diffs = diffs;
    }

    @ProcessElement
    public void process(ProcessContext context) {
      List<KeyDiff> all = new ArrayList<>();
      for (String d : context.sideInput(diffs)) {
        all.add(KeyDiff.fromJson(d));
      }
      try (CdcClient client = spec.source().open()) {
        new Reconciler(spec.hadoopConf().tables(), Clock.systemUTC())
            .finish(client, spec, plan, all);
      }
    }
  }

  /**
   * The capture instance whose table silver holds: the one silver records ({@link
   * SilverTable#CAPTURE_INSTANCES}, the first its source still knows), else {@code given}. A {@code
   * --captureInstance} of another table than the one silver records is refused.
   *
   * @param given {@code --captureInstance}, or its default
   * @param ciGiven whether the command line gave {@code --captureInstance}
   * @throws OptionRefusedException naming {@code --captureInstance} and the instances silver
   *     records, or saying that the source knows none of them
   */
  static String silverCaptureInstance(
      CdcClientFactory source,
      String silver,
      Map<String, String> properties,
      String given,
      boolean ciGiven) {
    List<String> recorded = SilverTable.captureInstances(properties);
    if (recorded.isEmpty()) {
      return given;
    }
    if (ciGiven) {
      if (recorded.contains(given.toLowerCase(Locale.ROOT))) {
        return given;
      }
      throw new OptionRefusedException(
          "--captureInstance "
              + given
              + ": silver "
              + silver
              + " holds "
              + String.join(", ", recorded)
              + " (its table property "
              + SilverTable.CAPTURE_INSTANCES
              + "): leave --captureInstance out, or name the silver table of "
              + given);
    }
    try (CdcClient client = source.open()) {
      for (String name : recorded) {
        try {
          for (CaptureInstance instance : client.captureInstances(name)) {
            if (instance.name().equalsIgnoreCase(name)) {
              return instance.name();
            }
          }
        } catch (org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError e) {
          // Disabled since: the next recorded instance of the table may still be there.
        }
      }
    }
    throw new OptionRefusedException(
        "silver "
            + silver
            + " holds "
            + String.join(", ", recorded)
            + " (its table property "
            + SilverTable.CAPTURE_INSTANCES
            + "), none of which the source knows now: pass --captureInstance=<a capture instance"
            + " of silver's table>");
  }

  /** Refuses a report path that holds a Delta table of another kind than reconcile. */
  private static void requireReportKind(DeltaTables tables, String report) {
    if (!tables.exists(report)) {
      return;
    }
    String kind = org.lakecdc.transforms.delta.TableKind.RECONCILE.propertyValue();
    tables
        .describe(report)
        .kind()
        .filter(k -> !k.equalsIgnoreCase(kind))
        .ifPresent(
            k -> {
              throw new OptionRefusedException(
                  "--report "
                      + report
                      + " is a "
                      + k
                      + " table, not a "
                      + kind
                      + " table: give the report a path of its own");
            });
  }

  /** The simulator of {@code --fakePath} (default the demo's), or the SQL Server. */
  private static CdcClientFactory source(ReconcileOptions o) {
    SourceTimeZone zone = SqlServerSource.checkTimeoutAndZone(o);
    if (o.getLockTimeoutMs() != null && o.getLockTimeoutMs() < 0) {
      throw new IllegalArgumentException(
          "--lockTimeoutMs must be 0 or a positive number of milliseconds up to 2147483647, not '"
              + o.getLockTimeoutMs()
              + "'");
    }
    if (o.getConnectionUrl() != null) {
      if (o.getFakePath() != null) {
        throw new IllegalArgumentException(
            "--fakePath is for the simulator and --connectionUrl for a real SQL Server: pass one"
                + " of them, not both");
      }
      return SqlServerSource.factory(o, zone, o.getLockTimeoutMs());
    }
    return CommandLine.simulator(o.getFakePath(), "silver's bronze was read from");
  }
}
