package org.lakecdc.pipelines.cli;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.demo.DemoDatabase;
import org.lakecdc.pipelines.options.ApplyChangesOptions;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.options.MaintainOptions;
import org.lakecdc.pipelines.options.OutputOptions;
import org.lakecdc.pipelines.options.PrintChangesOptions;
import org.lakecdc.pipelines.options.ReconcileOptions;
import org.lakecdc.pipelines.options.ShowOptions;
import org.lakecdc.pipelines.options.SimulatorOptions;
import org.lakecdc.pipelines.options.StatusOptions;

/**
 * Applies a job's {@link OutputOptions} to its logging, Log4j 2 configured by the {@code
 * log4j2.xml} of this module: the console gets one plain line per event (no time, thread or
 * logger), the detail goes to {@code --logFile}, and {@code --verbose} shows the detail on the
 * console too. The configuration reads the system properties {@value #VERBOSE} and {@value
 * #LOG_FILE}, set here before it is loaded again.
 *
 * <p>Without {@code --logFile} the log file is {@value #FILE_NAME} next to the first table the run
 * writes (in the directory that holds it): the main job's and {@code Backfill}'s bronze, {@code
 * ApplyChanges}' silver, {@code Reconcile}'s report table; the simulator's database for {@code
 * Simulator} and {@code PrintChanges}; the table read for {@code Status} ({@code --factsTable}) and
 * {@code Show}. A table on an object store ({@code s3a://}, ...) has no local directory: the file
 * is then {@value #FILE_NAME} in the working directory.
 *
 * <p>Under another configuration (a cluster's, which the bundled jars leave in charge, or the
 * tests') or another logging backend, only the system properties are set.
 */
public final class ConsoleLogging {
  /** The log file's name without {@code --logFile}, in the directory of the run's first table. */
  static final String FILE_NAME = "lakecdc.log";

  /** System property read by log4j2.xml: {@code true} shows the detailed lines on the console. */
  public static final String VERBOSE = "lakecdc.verbose";

  /** System property read by log4j2.xml: the log file's path. */
  public static final String LOG_FILE = "lakecdc.logFile";

  /** The {@code name} of the Configuration in log4j2.xml. */
  public static final String CONFIGURATION = "lakecdc";

  /**
   * The AWS SDK v1 that hadoop-aws brings logs through {@code java.util.logging} straight to
   * standard error (its "JAXB is unavailable" warning on every S3 run): below SEVERE it stays off
   * the console unless {@code --verbose}. Held here because {@code java.util.logging} keeps loggers
   * weakly.
   */
  private static final java.util.logging.Logger AWS_SDK_V1 =
      java.util.logging.Logger.getLogger("com.amazonaws");

  private ConsoleLogging() {}

  /**
   * Sets the logging up for {@code options}; without {@code --logFile}, first sets it to {@link
   * #defaultLogFile}, so that {@link OutputOptions#getLogFile} says where the lines go.
   *
   * @return whether the jobs' console configuration was loaded again with them (false under another
   *     configuration or backend)
   * @throws IllegalArgumentException when {@code --logFile} is empty, a directory, or below a plain
   *     file
   */
  public static boolean apply(OutputOptions options) {
    String file = options.getLogFile();
    if (file == null) {
      file = defaultLogFile(options);
      try {
        CommandLine.writableFile("logFile", file);
      } catch (IllegalArgumentException e) {
        // Next to a table path that cannot be created (below a plain file): that table's own
        // check names its option; the lines go to the working directory until then.
        file = FILE_NAME;
      }
      options.setLogFile(file);
    }
    if (file.isBlank()) {
      throw new IllegalArgumentException("--logFile must be a file's path, not empty");
    }
    if (Files.isDirectory(Path.of(file))) {
      throw new IllegalArgumentException(
          "--logFile must be a file's path, not the directory '" + file + "'");
    }
    // Log4j would drop every line of a file it cannot create, without a word.
    CommandLine.writableFile("logFile", file);
    System.setProperty(VERBOSE, Boolean.toString(options.getVerbose()));
    AWS_SDK_V1.setLevel(
        options.getVerbose() ? java.util.logging.Level.INFO : java.util.logging.Level.SEVERE);
    // No file until the run's checks have passed (startFile): a refused run leaves none behind.
    System.clearProperty(LOG_FILE);
    return reconfigure();
  }

  /**
   * Starts the log file of a run whose options passed their checks, before it does any work: the
   * file {@link #apply} settled on ({@link OutputOptions#getLogFile}), created with its first line
   * (its directory too). Until then the detailed lines of the checks go nowhere (the console still
   * gets the plain ones), so that a refused run (a bad option, a missing table, a refused object
   * store) leaves no file or directory behind.
   *
   * @param options the job's options, after {@link #apply}
   * @return whether the jobs' console configuration was loaded again with the file (false under
   *     another configuration or backend, where only the system property is set)
   */
  public static boolean startFile(OutputOptions options) {
    String file = options.getLogFile() == null ? defaultLogFile(options) : options.getLogFile();
    System.setProperty(LOG_FILE, file);
    return reconfigure();
  }

  /** Loads log4j2.xml again with the system properties, when it is the configuration in charge. */
  private static boolean reconfigure() {
    try {
      if (LogManager.getContext(false) instanceof LoggerContext context
          && CONFIGURATION.equals(context.getConfiguration().getName())) {
        context.reconfigure();
        return true;
      }
    } catch (LinkageError e) {
      // No Log4j core on this class path: whatever logging it has stays as it is.
    }
    return false;
  }

  /**
   * The line that ends a job's summary: where its log lines went, {@code Log file: <absolute
   * path>}.
   *
   * @param options the job's options, after {@link #apply}
   */
  public static String summaryLine(OutputOptions options) {
    String file = options.getLogFile() == null ? defaultLogFile(options) : options.getLogFile();
    return "Log file: " + Path.of(file).toAbsolutePath().normalize();
  }

  /**
   * The log file of a run without {@code --logFile}: {@value #FILE_NAME} in the directory of the
   * first table it writes (see the class comment), as given (relative paths stay relative to the
   * working directory).
   *
   * @param options the job's parsed options (its command line in {@link
   *     OutputOptions#getGivenArgs}, when parsed by {@link CommandLine#parse})
   * @return e.g. {@code lakecdc-demo/delta/lakecdc.log} for the demo's main job
   */
  static String defaultLogFile(OutputOptions options) {
    return nextTo(firstTable(options));
  }

  /**
   * {@value #FILE_NAME} in the directory that holds {@code table} (a path, or a {@code file:} URI),
   * or in the working directory for a table elsewhere (an object store's URI) or without a parent.
   */
  static String nextTo(@Nullable String table) {
    if (table == null || table.isBlank()) {
      return FILE_NAME;
    }
    Path path;
    try {
      if (table.matches("[A-Za-z][A-Za-z0-9+.-]+:.*")) {
        URI uri = URI.create(table);
        if (!"file".equalsIgnoreCase(uri.getScheme())) {
          return FILE_NAME;
        }
        path = Path.of(uri);
      } else {
        path = Path.of(table);
      }
    } catch (IllegalArgumentException e) {
      return FILE_NAME; // not a path: the job's own check names the option
    }
    Path parent = path.normalize().getParent();
    return parent == null ? FILE_NAME : parent.resolve(FILE_NAME).toString();
  }

  /** The first table the job of {@code options} writes (or reads, for a job that writes none). */
  private static @Nullable String firstTable(OutputOptions options) {
    String[] args =
        options.getGivenArgs() == null
            ? new String[0]
            : options.getGivenArgs().toArray(String[]::new);
    if (options instanceof CdcToDeltaOptions o) {
      return bronze(o, args);
    }
    if (options instanceof ApplyChangesOptions o) {
      // Silver when the run keeps one, else its history (a history-only run).
      String table = o.getSilver() != null ? o.getSilver() : o.getHistory();
      String template =
          o.getSilverTemplate() != null ? o.getSilverTemplate() : o.getHistoryTemplate();
      if (table != null || o.getTables() == null || template == null) {
        return table;
      }
      return template.replace(TablesOption.CI, first(o.getTables()));
    }
    if (options instanceof ReconcileOptions o) {
      return o.getReport();
    }
    if (options instanceof StatusOptions o) {
      return o.getFactsTable();
    }
    if (options instanceof ShowOptions o) {
      return o.getTable();
    }
    if (options instanceof MaintainOptions o) {
      return o.getTable() == null ? null : o.getTable().split(",", -1)[0].strip();
    }
    if (options instanceof SimulatorOptions o) {
      return simulator(o.getFakePath());
    }
    if (options instanceof PrintChangesOptions o) {
      return simulator(o.getFakePath());
    }
    return null;
  }

  /** The simulator database's directory: the one it writes (or reads). */
  private static String simulator(@Nullable String fakePath) {
    return fakePath == null ? DemoDatabase.DEFAULT_DIRECTORY.toString() : fakePath;
  }

  /** The main job's (or Backfill's) first bronze table: its target, or the first listed table's. */
  private static @Nullable String bronze(CdcToDeltaOptions o, String[] args) {
    if (!TablesOption.listsTables(o)) {
      String ci = o.getCaptureInstance() == null ? "" : o.getCaptureInstance();
      return o.getTarget() != null
          ? o.getTarget()
          : "lakecdc-demo/delta/" + ci.toLowerCase(Locale.ROOT);
    }
    try {
      TablesOption.Table table = TablesOption.tables(o, args).get(0);
      List<String> target = CommandLine.values(TablesOption.tableArgs(args, table, o), "target");
      if (!target.isEmpty()) {
        return target.get(target.size() - 1);
      }
    } catch (RuntimeException e) {
      // A refused list: the job says why; the log goes next to the template's first table.
    }
    return o.getTables() == null || o.getTargetTemplate() == null
        ? null
        : o.getTargetTemplate().replace(TablesOption.CI, first(o.getTables()));
  }

  private static String first(String list) {
    return list.split(",", -1)[0].strip().toLowerCase(Locale.ROOT);
  }
}
