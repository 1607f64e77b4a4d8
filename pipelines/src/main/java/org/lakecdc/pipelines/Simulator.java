package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeExport;
import org.lakecdc.io.mssqlcdc.fake.FakeReplay;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.SqlServerSource;
import org.lakecdc.pipelines.demo.DemoDatabase;
import org.lakecdc.pipelines.options.SimulatorOptions;
import org.lakecdc.pipelines.options.SqlServerOptions;

/**
 * The simulator's command line: rehearse CDC situations on the file-backed SQL Server simulator
 * (docs/fake-format.md) without SQL Server. The first argument is the verb, the options follow
 * ({@link SimulatorOptions}); the database is {@code --fakePath} (default {@code
 * lakecdc-demo/source}, the demo's):
 *
 * <ul>
 *   <li>{@code commit --transactions=N [--captureInstance=ci]}: N transactions of the demo
 *       application ({@link DemoDatabase#applicationTransactions}), 10 to 29 s of server time apart
 *       after the last commit; with {@code --captureInstance}, until N of them changed that
 *       instance's table.
 *   <li>{@code idle [--entries=N] [--interval=5m]}: capture's idle entries ({@code
 *       cdc.lsn_time_mapping} rows without change rows), the first an interval after the last
 *       commit.
 *   <li>{@code cleanup (--retention=D | --lowWatermark=0x…) [--captureInstance=ci |
 *       --allInstances]}: {@code sys.sp_cdc_cleanup_change_table} with the low watermark given, or
 *       the cleanup job's with a retention: the newest commit at or before the simulator's now
 *       ({@link CdcClient#currentTime()}) minus the retention, as {@code
 *       sys.fn_cdc_map_time_to_lsn('largest less than or equal', …)} finds it. An instance whose
 *       min_lsn is already there or later keeps it.
 *   <li>{@code enable-instance --table=s.t [--captureInstance=name] [--capturedColumns=a,b]}:
 *       {@code sys.sp_cdc_enable_table}, the table's first or second capture instance.
 *   <li>{@code disable-instance --captureInstance=name}: {@code sys.sp_cdc_disable_table}.
 *   <li>{@code alter --table=s.t (--addColumn='c type' | --dropColumn=c | --alterColumn='c type')}:
 *       DDL, recorded in {@code cdc.ddl_history} of every instance of the table.
 *   <li>{@code export --tables=ci,… --exportPath=dir [--fromLsn] [--toLsn] [--tableRows]}: a
 *       database's CDC history through {@link CdcClient} ({@code --connectionUrl} with {@code
 *       --user} and {@code --passwordEnv} or {@code --passwordFile}, as the main job reads SQL
 *       Server; else the simulator at {@code --fakePath}) into a new directory ({@link
 *       FakeExport}).
 *   <li>{@code import --exportPath=dir [--toLsn | --commits]} into a new {@code --fakePath}, and
 *       {@code replay --exportPath=dir [--toLsn | --commits]} on: the export step by step ({@link
 *       FakeReplay}).
 * </ul>
 *
 * <p>Each verb prints one line saying what it did (LSNs as {@code 0x} + 20 hex digits, commit times
 * in ISO-8601 UTC). A bad verb, option or value, and a request the database refuses (an unknown
 * capture instance or column, a third instance, a low watermark that is no commit), print one
 * {@code error:} line naming the option or value and what is accepted, write nothing, and exit with
 * code 2 ({@link JobExit#BAD_OPTION}); any other failure exits with code 1. Writes into the demo
 * database hold its lock ({@link DemoDatabase#writing}).
 */
public final class Simulator {
  /** The verbs, in the order the usage line lists them. */
  static final List<String> VERBS =
      List.of(
          "commit",
          "idle",
          "cleanup",
          "enable-instance",
          "disable-instance",
          "alter",
          "export",
          "import",
          "replay");

  /** The options of {@link SimulatorOptions} and {@link SqlServerOptions} each verb takes. */
  private static final Map<String, Set<String>> VERB_OPTIONS = new LinkedHashMap<>();

  static {
    VERB_OPTIONS.put("transactions", Set.of("commit"));
    VERB_OPTIONS.put(
        "captureInstance", Set.of("commit", "cleanup", "enable-instance", "disable-instance"));
    VERB_OPTIONS.put("entries", Set.of("idle"));
    VERB_OPTIONS.put("interval", Set.of("idle"));
    VERB_OPTIONS.put("retention", Set.of("cleanup"));
    VERB_OPTIONS.put("lowWatermark", Set.of("cleanup"));
    VERB_OPTIONS.put("allInstances", Set.of("cleanup"));
    VERB_OPTIONS.put("table", Set.of("enable-instance", "alter"));
    VERB_OPTIONS.put("capturedColumns", Set.of("enable-instance"));
    VERB_OPTIONS.put("addColumn", Set.of("alter"));
    VERB_OPTIONS.put("dropColumn", Set.of("alter"));
    VERB_OPTIONS.put("alterColumn", Set.of("alter"));
    VERB_OPTIONS.put("tables", Set.of("export"));
    VERB_OPTIONS.put("fromLsn", Set.of("export"));
    VERB_OPTIONS.put("toLsn", Set.of("export", "import", "replay"));
    VERB_OPTIONS.put("tableRows", Set.of("export"));
    VERB_OPTIONS.put("exportPath", Set.of("export", "import", "replay"));
    VERB_OPTIONS.put("commits", Set.of("import", "replay"));
    for (String server :
        List.of(
            "connectionUrl",
            "user",
            "passwordEnv",
            "passwordFile",
            "connectTimeout",
            "sourceTimeZone")) {
      VERB_OPTIONS.put(server, Set.of("export"));
    }
  }

  /** A duration: a number and a unit (s, m, h, d); a number alone is minutes. */
  private static final Pattern DURATION = Pattern.compile("(\\d{1,9})\\s*([smhd]?)");

  private Simulator() {}

  /** Entry point; {@link SimulatorOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.out, System.err, Clock.systemUTC()));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the verb, then the options
   * @param out where the verb's line goes
   * @param err where the {@code error:} line goes
   * @param clock the machine's clock the simulator's time runs on ({@link FakeSqlServer#open(Path,
   *     Clock)}); tests give one they move by hand
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
    SimulatorOptions options;
    String verb;
    try {
      verb = args.length == 0 ? "" : args[0];
      if (!VERBS.contains(verb)) {
        throw new IllegalArgumentException(
            "The first argument must be a verb: "
                + String.join(", ", VERBS.subList(0, VERBS.size() - 1))
                + " or "
                + VERBS.get(VERBS.size() - 1)
                + (verb.isEmpty() ? "" : ", not '" + verb + "'")
                + " (docs/fake-format.md \"Command line\")");
      }
      String[] rest = Arrays.copyOfRange(args, 1, args.length);
      options = CommandLine.parse(rest, SimulatorOptions.class, "docs/fake-format.md");
      for (Map.Entry<String, Set<String>> option : VERB_OPTIONS.entrySet()) {
        if (given(rest, option.getKey()) && !option.getValue().contains(verb)) {
          throw new IllegalArgumentException(
              "--"
                  + option.getKey()
                  + " applies to "
                  + String.join(" and ", new TreeSet<>(option.getValue()))
                  + ", not to "
                  + verb);
        }
      }
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      String line = new Verb(verb, args, options, out, clock).run();
      out.println(line);
      out.flush();
      return JobExit.OK;
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    } catch (Throwable t) {
      return JobExit.report(t, err, options.getVerbose());
    }
  }

  private static boolean given(String[] args, String option) {
    return !CommandLine.values(args, option).isEmpty();
  }

  /** One verb's run: checks its options, writes, and returns its line. */
  private static final class Verb {
    private final String verb;
    private final String[] args;
    private final SimulatorOptions o;
    private final PrintStream out;
    private final Clock clock;

    Verb(String verb, String[] args, SimulatorOptions o, PrintStream out, Clock clock) {
      this.verb = verb;
      this.args = args;
      this.o = o;
      this.out = out;
      this.clock = clock;
    }

    String run() {
      switch (verb) {
        case "commit":
          return commit();
        case "idle":
          return idle();
        case "cleanup":
          return cleanup();
        case "enable-instance":
          return enableInstance();
        case "disable-instance":
          return disableInstance();
        case "alter":
          return alter();
        case "export":
          return export();
        case "import":
          return replay(true);
        default:
          return replay(false);
      }
    }

    private boolean given(String option) {
      return Simulator.given(args, option);
    }

    /** {@code --fakePath}, or the demo's directory. */
    private Path fakePath() {
      if (o.getFakePath() != null && o.getFakePath().isBlank()) {
        throw new IllegalArgumentException("--fakePath must not be empty");
      }
      return o.getFakePath() == null ? DemoDatabase.DEFAULT_DIRECTORY : Path.of(o.getFakePath());
    }

    /** {@code --fakePath}, which must hold a simulator database. */
    private Path database() {
      Path path = fakePath();
      if (!Files.isRegularFile(path.resolve("server.json"))) {
        throw new IllegalArgumentException(
            "--fakePath "
                + path
                + " holds no simulator database (no server.json; docs/fake-format.md describes the"
                + " directory): "
                + (DemoDatabase.isDefault(path)
                    ? "run the main job once to build the demo database there, or give --fakePath"
                    : "check the path, or import an export into it"));
      }
      return path;
    }

    /** Opens the writer and a reader of {@code path}, on this run's clock. */
    private FakeSqlServer open(Path path) {
      return FakeSqlServer.open(path, clock);
    }

    private static CdcClient client(FakeSqlServer db) {
      return db.clientFactory().open();
    }

    /** The instance {@code name} of the database, or a bad option naming {@code option}. */
    private static CaptureInstance instance(CdcClient client, String name, String option) {
      try {
        for (CaptureInstance i : client.captureInstances(name)) {
          if (i.name().equalsIgnoreCase(name)) {
            return i;
          }
        }
        throw new CaptureInstanceNotFoundError(name, List.of());
      } catch (CaptureInstanceNotFoundError e) {
        throw new IllegalArgumentException(
            "--" + option + " " + name + ": " + CommandLine.firstLine(e));
      }
    }

    private int positive(String option, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(
            "--" + option + " must be a positive integer, not '" + value + "'");
      }
      return value;
    }

    // ---- commit -------------------------------------------------------------------------------

    private String commit() {
      int wanted = positive("transactions", o.getTransactions());
      Path path = database();
      return DemoDatabase.writing(
          path,
          out,
          () -> {
            FakeSqlServer db = open(path);
            if (!DemoDatabase.hasApplicationTables(db)) {
              throw new IllegalArgumentException(
                  "commit writes the demo application's transactions, into dbo.orders and"
                      + " dbo.lineitem, which --fakePath "
                      + path
                      + " does not have: give the demo database's directory");
            }
            try (CdcClient client = client(db)) {
              Optional<CaptureInstance> only =
                  given("captureInstance")
                      ? Optional.of(instance(client, o.getCaptureInstance(), "captureInstance"))
                      : Optional.empty();
              Lsn before = client.maxLsn().orElse(Lsn.ZERO);
              long committed = 0;
              long counted = 0;
              for (int round = 0; counted < wanted; round++) {
                if (round == 100) {
                  throw new IllegalStateException(
                      "The demo application committed "
                          + committed
                          + " transactions, "
                          + counted
                          + " of them with changes in "
                          + only.get().name()
                          + ", in 100 rounds: it changes that table too rarely");
                }
                try (FakeSqlServer.Bulk bulk = db.bulk()) {
                  DemoDatabase.applicationTransactions(db, (int) (wanted - counted));
                }
                Lsn max = client.maxLsn().orElse(Lsn.ZERO);
                committed = client.commitCount(before, max);
                counted =
                    only.isPresent()
                        ? commitsWithChanges(client, only.get(), before, max)
                        : committed;
              }
              Commit first = client.nthCommitAfter(before, 1).orElseThrow();
              Commit last =
                  client.lastCommitAtOrBefore(client.maxLsn().orElseThrow()).orElseThrow();
              return String.format(
                  Locale.ROOT,
                  "committed %s in %s: %s (%s) to %s (%s)%s; max_lsn %s",
                  count(committed, "transaction"),
                  path,
                  first.lsn(),
                  first.commitTime(),
                  last.lsn(),
                  last.commitTime(),
                  only.isEmpty()
                      ? ""
                      : ", "
                          + (counted == committed
                              ? "all"
                              : String.format(Locale.ROOT, "%,d", counted))
                          + " with changes in "
                          + only.get().name(),
                  last.lsn());
            }
          });
    }

    /** The commits in {@code (after, upTo]} with change rows in {@code instance}. */
    private static long commitsWithChanges(
        CdcClient client, CaptureInstance instance, Lsn after, Lsn upTo) {
      long commits = 0;
      Lsn last = null;
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(
              new ChangeQuery(
                  instance.name(), client.incrementLsn(after), upTo, List.of(), false))) {
        while (rows.hasNext()) {
          Lsn lsn = rows.next().startLsn();
          if (!lsn.equals(last)) {
            commits++;
            last = lsn;
          }
        }
      }
      return commits;
    }

    // ---- idle ---------------------------------------------------------------------------------

    private String idle() {
      int entries = positive("entries", o.getEntries());
      Duration interval = duration("interval", o.getInterval());
      if (interval.isZero()) {
        throw new IllegalArgumentException(
            "--interval must be a positive duration such as 30s, 5m, 1h or 1d, not '"
                + o.getInterval()
                + "'");
      }
      Path path = database();
      return DemoDatabase.writing(
          path,
          out,
          () -> {
            FakeSqlServer db = open(path);
            try (CdcClient client = client(db)) {
              Instant from =
                  client
                      .maxLsn()
                      .flatMap(client::lastCommitAtOrBefore)
                      .map(Commit::commitTime)
                      .or(client::currentTime)
                      .orElse(clock.instant());
              List<Lsn> written = new ArrayList<>();
              try (FakeSqlServer.Bulk bulk = db.bulk()) {
                for (int k = 1; k <= entries; k++) {
                  written.add(db.idle(from.plus(interval.multipliedBy(k))));
                }
              }
              Commit first = client.commit(written.get(0)).orElseThrow();
              Commit last = client.commit(written.get(written.size() - 1)).orElseThrow();
              return String.format(
                  Locale.ROOT,
                  "wrote %s in %s, %s apart after the last commit: %s (%s)%s; max_lsn %s",
                  count(entries, "idle entry", "idle entries"),
                  path,
                  o.getInterval().strip(),
                  first.lsn(),
                  first.commitTime(),
                  entries == 1 ? "" : " to " + last.lsn() + " (" + last.commitTime() + ")",
                  last.lsn());
            }
          });
    }

    // ---- cleanup ------------------------------------------------------------------------------

    private String cleanup() {
      if (given("retention") == given("lowWatermark")) {
        throw new IllegalArgumentException(
            "cleanup needs "
                + (given("retention") ? "one of" : "either")
                + " --retention (a duration such as 0m, 30m, 72h or 3d: the low watermark is the"
                + " newest commit at or before now minus it) or --lowWatermark (a commit LSN),"
                + (given("retention") ? " not both" : " and got neither"));
      }
      if (o.getAllInstances() && given("captureInstance")) {
        throw new IllegalArgumentException(
            "--allInstances cleans up every capture instance; leave --captureInstance out, or"
                + " --allInstances");
      }
      Duration retention = given("retention") ? duration("retention", o.getRetention()) : null;
      Lsn lowWatermark = given("lowWatermark") ? lsn("lowWatermark", o.getLowWatermark()) : null;
      Path path = database();
      return DemoDatabase.writing(
          path,
          out,
          () -> {
            FakeSqlServer db = open(path);
            try (CdcClient client = client(db)) {
              List<String> instances =
                  o.getAllInstances()
                      ? db.captureInstances()
                      : List.of(instance(client, o.getCaptureInstance(), "captureInstance").name());
              if (instances.isEmpty()) {
                throw new IllegalArgumentException(
                    "--allInstances: " + path + " has no capture instance to clean up");
              }
              String how;
              Optional<Lsn> target;
              if (lowWatermark != null) {
                if (client.commit(lowWatermark).isEmpty()) {
                  throw new IllegalArgumentException(
                      "--lowWatermark "
                          + lowWatermark
                          + " is not the start_lsn of a row of cdc.lsn_time_mapping (SQL Server"
                          + " refuses it too): give a commit LSN, such as max_lsn "
                          + client.maxLsn().map(Lsn::toString).orElse("(none)"));
                }
                if (instances.size() == 1
                    && lowWatermark.isBefore(client.minLsn(instances.get(0)))) {
                  throw new IllegalArgumentException(
                      "--lowWatermark "
                          + lowWatermark
                          + " is below the current min_lsn "
                          + client.minLsn(instances.get(0))
                          + " of "
                          + instances.get(0)
                          + ": cleanup only moves it forward");
                }
                target = Optional.of(lowWatermark);
                how = "low watermark " + lowWatermark;
              } else {
                Instant now =
                    client
                        .currentTime()
                        .orElse(clock.instant())
                        .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
                Instant threshold = now.minus(retention);
                target = client.lastCommitLsnAtOrBefore(threshold);
                how =
                    "low watermark = the newest commit at or before "
                        + threshold
                        + " (now "
                        + now
                        + " minus retention "
                        + o.getRetention().strip()
                        + ")";
              }
              Map<String, Long> deleted = new LinkedHashMap<>();
              for (String ci : instances) {
                if (target.isPresent() && target.get().isAfter(client.minLsn(ci))) {
                  deleted.put(
                      ci,
                      client.estimatedChangeRows(ci, Lsn.ZERO, client.decrementLsn(target.get())));
                }
              }
              try (FakeSqlServer.Bulk bulk = db.bulk()) {
                for (String ci : deleted.keySet()) {
                  db.cleanup(ci, target.get());
                }
              }
              String what =
                  instances.size() == 1
                      ? "cleanup of " + instances.get(0)
                      : "cleanup of " + count(instances.size(), "capture instance");
              if (deleted.isEmpty()) {
                return what
                    + " in "
                    + path
                    + ": nothing to delete, "
                    + (target.isEmpty()
                        ? "no commit is that old"
                        : (instances.size() == 1
                                ? "min_lsn stays " + client.minLsn(instances.get(0))
                                : "every min_lsn is already there or later")
                            + " (the low watermark is "
                            + target.get()
                            + ")")
                    + "; "
                    + how;
              }
              Commit at = client.commit(target.get()).orElseThrow();
              long rows = deleted.values().stream().mapToLong(Long::longValue).sum();
              StringBuilder each = new StringBuilder();
              if (instances.size() > 1) {
                List<String> parts = new ArrayList<>();
                deleted.forEach(
                    (ci, n) -> parts.add(ci + " " + String.format(Locale.ROOT, "%,d", n)));
                each.append(" (").append(String.join(", ", parts)).append(")");
              }
              return String.format(
                  Locale.ROOT,
                  "%s in %s: min_lsn %s (committed %s), %s deleted%s; %s",
                  what,
                  path,
                  at.lsn(),
                  at.commitTime(),
                  count(rows, "change row"),
                  each,
                  how);
            }
          });
    }

    // ---- enable-instance, disable-instance ----------------------------------------------------

    private String enableInstance() {
      String table = required("table", o.getTable(), "the source table, schema.table (dbo.orders)");
      CaptureOptions capture = CaptureOptions.defaults();
      if (given("captureInstance")) {
        capture = capture.withName(o.getCaptureInstance().strip());
      }
      if (o.getCapturedColumns() != null) {
        List<String> columns =
            Arrays.stream(o.getCapturedColumns().split(",")).map(String::strip).toList();
        if (columns.stream().anyMatch(String::isEmpty)) {
          throw new IllegalArgumentException(
              "--capturedColumns must be column names, comma-separated (o_orderkey,o_orderstatus),"
                  + " not '"
                  + o.getCapturedColumns()
                  + "'");
        }
        capture = capture.withCapturedColumns(columns);
      }
      CaptureOptions options = capture;
      Path path = database();
      return DemoDatabase.writing(
          path,
          out,
          () -> {
            FakeSqlServer db = open(path);
            String name;
            try {
              name = db.enableCdc(table, options);
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException(
                  "enable-instance --table=" + table + ": " + CommandLine.firstLine(e), e);
            }
            try (CdcClient client = client(db)) {
              CaptureInstance created = instance(client, name, "captureInstance");
              List<CapturedColumn> columns = client.capturedColumns(name);
              return String.format(
                  Locale.ROOT,
                  "enabled capture instance %s on %s.%s in %s: start_lsn %s, %s; %s.%s has capture"
                      + " instances %s",
                  name,
                  created.sourceSchema(),
                  created.sourceTable(),
                  path,
                  client.minLsn(name),
                  count(columns.size(), "captured column"),
                  created.sourceSchema(),
                  created.sourceTable(),
                  String.join(
                      ", ",
                      client.captureInstances(name).stream().map(CaptureInstance::name).toList()));
            }
          });
    }

    private String disableInstance() {
      if (!given("captureInstance")) {
        throw new IllegalArgumentException(
            "disable-instance needs --captureInstance, the capture instance to drop (its change"
                + " table and DDL history go with it)");
      }
      Path path = database();
      return DemoDatabase.writing(
          path,
          out,
          () -> {
            FakeSqlServer db = open(path);
            try (CdcClient client = client(db)) {
              CaptureInstance dropped = instance(client, o.getCaptureInstance(), "captureInstance");
              long rows = client.estimatedChangeRows(dropped.name(), Lsn.ZERO, Lsn.MAX);
              List<String> left = new ArrayList<>();
              for (CaptureInstance i : client.captureInstances(dropped.name())) {
                if (!i.name().equals(dropped.name())) {
                  left.add(i.name());
                }
              }
              db.disableCdc(dropped.name());
              String table = dropped.sourceSchema() + "." + dropped.sourceTable();
              return String.format(
                  Locale.ROOT,
                  "disabled capture instance %s of %s in %s: its change table (%s) and DDL history"
                      + " dropped; %s",
                  dropped.name(),
                  table,
                  path,
                  count(rows, "row"),
                  left.isEmpty()
                      ? table + " has no capture instance left"
                      : table
                          + " has capture instance"
                          + (left.size() == 1 ? " " : "s ")
                          + String.join(", ", left));
            }
          });
    }

    // ---- alter --------------------------------------------------------------------------------

    private String alter() {
      String table = required("table", o.getTable(), "the source table, schema.table (dbo.orders)");
      int kinds =
          (given("addColumn") ? 1 : 0)
              + (given("dropColumn") ? 1 : 0)
              + (given("alterColumn") ? 1 : 0);
      if (kinds != 1) {
        throw new IllegalArgumentException(
            "alter needs exactly one of --addColumn='<column> <type>', --dropColumn=<column> or"
                + " --alterColumn='<column> <new type>'"
                + (kinds == 0 ? "" : ", not " + kinds));
      }
      String[] columnAndType =
          given("addColumn")
              ? columnAndType("addColumn", o.getAddColumn())
              : given("alterColumn") ? columnAndType("alterColumn", o.getAlterColumn()) : null;
      String drop =
          given("dropColumn") ? required("dropColumn", o.getDropColumn(), "a column name") : null;
      Path path = database();
      return DemoDatabase.writing(
          path,
          out,
          () -> {
            FakeSqlServer db = open(path);
            Lsn lsn;
            try {
              if (drop != null) {
                lsn = db.dropColumn(table, drop.strip());
              } else if (given("addColumn")) {
                lsn = db.addColumn(table, columnAndType[0], SqlServerType.parse(columnAndType[1]));
              } else {
                lsn =
                    db.alterColumn(table, columnAndType[0], SqlServerType.parse(columnAndType[1]));
              }
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException(
                  "alter --table=" + table + ": " + CommandLine.firstLine(e), e);
            }
            try (CdcClient client = client(db)) {
              List<String> recorded = new ArrayList<>();
              String command = null;
              for (String ci : db.captureInstances()) {
                for (DdlChange d : client.ddlHistory(ci, client.decrementLsn(lsn), lsn)) {
                  recorded.add(ci);
                  command = d.command();
                }
              }
              return String.format(
                  Locale.ROOT,
                  "%s at ddl_lsn %s in %s; %s",
                  command != null ? command : "altered " + table,
                  lsn,
                  path,
                  recorded.isEmpty()
                      ? "no capture instance tracks " + table + ", so cdc.ddl_history has no row"
                      : "recorded in cdc.ddl_history of " + String.join(", ", recorded));
            }
          });
    }

    private static String[] columnAndType(String option, String value) {
      String text = value == null ? "" : value.strip();
      int space = text.indexOf(' ');
      String[] parts =
          space < 0
              ? null
              : new String[] {text.substring(0, space), text.substring(space + 1).strip()};
      if (parts != null) {
        try {
          SqlServerType.parse(parts[1]);
          return parts;
        } catch (IllegalArgumentException e) {
          // Refused below with the option's own words.
        }
      }
      throw new IllegalArgumentException(
          "--"
              + option
              + " must be '<column> <type>', such as 'o_note varchar(100)', not '"
              + value
              + "'");
    }

    // ---- export, import, replay ---------------------------------------------------------------

    private String export() {
      String tables =
          required(
              "tables",
              o.getTables(),
              "the capture instances to export, comma-separated (dbo_orders,dbo_lineitem)");
      List<String> instances = Arrays.stream(tables.split(",")).map(String::strip).toList();
      if (instances.stream().anyMatch(String::isEmpty)) {
        throw new IllegalArgumentException(
            "--tables must be capture instances, comma-separated (dbo_orders,dbo_lineitem), not '"
                + tables
                + "'");
      }
      Path exportPath =
          Path.of(required("exportPath", o.getExportPath(), "a new or empty directory"));
      Optional<Lsn> from =
          given("fromLsn") ? Optional.of(lsn("fromLsn", o.getFromLsn())) : Optional.empty();
      Optional<Lsn> to =
          given("toLsn") ? Optional.of(lsn("toLsn", o.getToLsn())) : Optional.empty();
      if (from.isPresent() && to.isPresent() && from.get().isAfter(to.get())) {
        throw new IllegalArgumentException(
            "--fromLsn " + from.get() + " is after --toLsn " + to.get() + ": give a range");
      }
      SourceTimeZone zone = SqlServerSource.checkTimeoutAndZone(o);
      CdcClientFactory factory;
      String source;
      if (o.getConnectionUrl() != null) {
        if (o.getFakePath() != null) {
          throw new IllegalArgumentException(
              "--fakePath is for the simulator and --connectionUrl for a real SQL Server: export"
                  + " reads one of them, not both");
        }
        factory = SqlServerSource.factory(o, zone, null);
        source = o.getConnectionUrl();
      } else {
        for (String serverOnly : List.of("user", "passwordEnv", "passwordFile")) {
          if (given(serverOnly)) {
            throw new IllegalArgumentException(
                "--"
                    + serverOnly
                    + " applies to --connectionUrl (a real SQL Server); add --connectionUrl, or"
                    + " leave --"
                    + serverOnly
                    + " out");
          }
        }
        Path path = database();
        factory = FakeCdcClientFactory.of(path, clock);
        source = path.toString();
      }
      try {
        FakeExport.requireNewOrEmpty(exportPath);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--exportPath " + CommandLine.firstLine(e), e);
      }
      CommandLine.writableDirectory("exportPath", exportPath);
      FakeExport.Summary summary;
      try (CdcClient client = factory.open()) {
        summary = FakeExport.export(client, instances, from, to, o.getTableRows(), exportPath);
      } catch (CaptureInstanceNotFoundError e) {
        throw new IllegalArgumentException(
            "--tables " + tables + ": " + CommandLine.firstLine(e), e);
      }
      return String.format(
          Locale.ROOT,
          "exported %s (%s) of %s from %s to %s: %s%s, %s, %s, %s%s",
          count(summary.captureInstances().size(), "capture instance"),
          String.join(", ", summary.captureInstances()),
          String.join(", ", summary.tables()),
          source,
          exportPath,
          count(summary.commits(), "commit"),
          summary.firstCommit().isEmpty()
              ? ""
              : " "
                  + summary.firstCommit().get().lsn()
                  + " ("
                  + summary.firstCommit().get().commitTime()
                  + ") to "
                  + summary.lastCommit().get().lsn()
                  + " ("
                  + summary.lastCommit().get().commitTime()
                  + ")",
          count(summary.changeRows(), "change row"),
          count(summary.ddlRows(), "DDL row"),
          count(summary.tableRows(), "table row"),
          summary.tablesWithoutRows().isEmpty()
              ? ""
              : " (no rows of " + String.join(", ", summary.tablesWithoutRows()) + ")");
    }

    private String replay(boolean initialize) {
      Path exportPath =
          Path.of(required("exportPath", o.getExportPath(), "the directory of an export"));
      if (!Files.isRegularFile(exportPath.resolve("server.json"))) {
        throw new IllegalArgumentException(
            "--exportPath "
                + exportPath
                + " holds no export (no server.json; docs/fake-format.md describes the directory)");
      }
      if (given("toLsn") && given("commits")) {
        throw new IllegalArgumentException(
            verb
                + " takes --toLsn (replay up to an LSN) or --commits (replay N commits), not both");
      }
      Optional<Lsn> upTo =
          given("toLsn") ? Optional.of(lsn("toLsn", o.getToLsn())) : Optional.empty();
      OptionalInt commits =
          given("commits")
              ? OptionalInt.of(positive("commits", o.getCommits()))
              : OptionalInt.empty();
      Path target = initialize ? fakePath() : database();
      FakeReplay.Step step;
      if (initialize) {
        try {
          FakeExport.requireNewOrEmpty(target);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "--fakePath "
                  + CommandLine.firstLine(e)
                  + " (import starts a new simulator database; replay continues one)",
              e);
        }
        step = FakeReplay.importInto(exportPath, target, upTo, commits);
      } else {
        try {
          step = FakeReplay.replay(exportPath, target, upTo, commits);
        } catch (IllegalStateException e) {
          throw new IllegalArgumentException("--fakePath " + CommandLine.firstLine(e), e);
        }
      }
      if (!initialize && step.commits() == 0) {
        return "nothing to replay: "
            + target
            + " is at max_lsn "
            + step.maxLsn().map(Lsn::toString).orElse("(none)")
            + (step.remainingCommits() == 0
                ? ", the last commit of " + exportPath
                : "; the next commit of " + exportPath + " is after --toLsn");
      }
      return String.format(
          Locale.ROOT,
          "%s %s of %s into %s: %s%s, %s, %s%s; %s",
          initialize ? "imported" : "replayed",
          count(step.commits(), "commit"),
          exportPath,
          target,
          step.firstCommit().isEmpty()
              ? "no commit"
              : step.firstCommit().get() + " to " + step.lastCommit().get(),
          step.lastCommitTime().map(t -> " (last committed " + t + ")").orElse(""),
          count(step.changeRows(), "change row"),
          count(step.ddlRows(), "DDL row"),
          step.instancesAdded().isEmpty()
              ? ""
              : ", capture instance"
                  + (step.instancesAdded().size() == 1 ? " " : "s ")
                  + String.join(", ", step.instancesAdded())
                  + " added",
          step.remainingCommits() == 0
              ? "the export is replayed whole"
              : count(step.remainingCommits(), "commit") + " left to replay");
    }

    // ---- values -------------------------------------------------------------------------------

    private static String required(String option, String value, String what) {
      if (value == null || value.isBlank()) {
        throw new IllegalArgumentException("--" + option + " is required: " + what);
      }
      return value.strip();
    }

    private static Lsn lsn(String option, String value) {
      try {
        if (value == null || !value.strip().matches("0[xX][0-9a-fA-F]{20}")) {
          throw new IllegalArgumentException(value);
        }
        return Lsn.parse(value);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "--"
                + option
                + " must be an LSN, 0x followed by 20 hexadecimal digits"
                + " (0x0000002A000001000001), not '"
                + value
                + "'");
      }
    }
  }

  /**
   * A duration option: a number and a unit ({@code s}, {@code m}, {@code h}, {@code d}); a number
   * alone is minutes (the unit of SQL Server's {@code @retention}).
   *
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  static Duration duration(String option, String value) {
    Matcher m = DURATION.matcher(value == null ? "" : value.strip().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "--"
              + option
              + " must be a duration such as 0m, 30m, 72h or 3d (a number alone is minutes), not '"
              + value
              + "'");
    }
    long n = Long.parseLong(m.group(1));
    switch (m.group(2)) {
      case "s":
        return Duration.ofSeconds(n);
      case "h":
        return Duration.ofHours(n);
      case "d":
        return Duration.ofDays(n);
      default:
        return Duration.ofMinutes(n);
    }
  }

  /** {@code 1 commit}, {@code 1,234 commits}. */
  static String count(long n, String one) {
    return count(n, one, one + "s");
  }

  static String count(long n, String one, String many) {
    return String.format(Locale.ROOT, "%,d %s", n, n == 1 ? one : many);
  }
}
