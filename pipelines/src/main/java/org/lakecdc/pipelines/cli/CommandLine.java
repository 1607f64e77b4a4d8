package org.lakecdc.pipelines.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.options.OutputOptions;
import org.lakecdc.transforms.delta.TablePaths;

/**
 * Parses a job's command line with Beam's {@link PipelineOptionsFactory}, after checking its
 * arguments against the options interfaces' getters ({@link OptionCheck}) so that a wrong one is
 * refused in one line naming the option and what it accepts: an unknown option, one given twice, an
 * empty or wrongly typed value, an enum option's value that is none of its constants. Beam's own
 * messages name neither the option nor what it accepts; what Beam still refuses after the check (an
 * argument without {@code --}, a runner it does not know) ends with the first line of its message.
 *
 * <p>A job's command line turns the DirectRunner's enforcement checks off unless it sets them
 * itself ({@link DirectOptions#isEnforceImmutability()}, {@link
 * DirectOptions#isEnforceEncodability()}): they encode and compare every element a transform reads
 * or writes, which costs more than the job's own work, and they check the transforms' code, which
 * the tests run with them on.
 */
public final class CommandLine {
  private CommandLine() {}

  /**
   * Parses {@code args} as {@code type}; turns the DirectRunner's enforcement checks ({@code
   * enforceImmutability}, {@code enforceEncodability}) off unless {@code args} names them ({@code
   * --enforceImmutability=true} keeps that check on); sizes the DirectRunner's pool ({@link
   * #directRunnerParallelism}) unless {@code --targetParallelism} is given; sets what a local Spark
   * run does not need off and gives a local Flink run its configuration ({@link RunnerSettings});
   * and, for a job's options ({@link OutputOptions}), sets its logging up with them ({@link
   * ConsoleLogging#apply}).
   *
   * @throws IllegalArgumentException with one line naming the option and what it accepts
   */
  public static <T extends PipelineOptions> T parse(String[] args, Class<T> type) {
    return parse(args, type, "docs/options.md");
  }

  /**
   * {@link #parse(String[], Class)} for a command whose options another page lists: an unknown
   * option's line points at {@code optionsDoc} (e.g. {@code docs/status.md}).
   *
   * @throws IllegalArgumentException with one line naming the option and what it accepts
   */
  public static <T extends PipelineOptions> T parse(
      String[] args, Class<T> type, String optionsDoc) {
    T options = parseOnly(args, type, optionsDoc);
    if (options instanceof OutputOptions output) {
      ConsoleLogging.apply(output);
    }
    return options;
  }

  /**
   * {@link #parse} without setting logging up: for the options of one table of many ({@code
   * --tables}), parsed after the run's own.
   *
   * @throws IllegalArgumentException with one line naming the option and what it accepts
   */
  public static <T extends PipelineOptions> T parseOnly(String[] args, Class<T> type) {
    return parseOnly(args, type, "docs/options.md");
  }

  private static <T extends PipelineOptions> T parseOnly(
      String[] args, Class<T> type, String optionsDoc) {
    String[] forBeam = checked(args, type, optionsDoc);
    T options;
    Map<String, List<String>> given = given(args);
    try {
      options = PipelineOptionsFactory.fromArgs(forBeam).withValidation().as(type);
      List<String> flink = RunnerSettings.flinkArguments(options, given);
      if (!flink.isEmpty()) {
        // Parsed again with the local Flink's configuration directory: --flinkConfDir is an
        // option Beam knows only once it has found the FlinkRunner.
        List<String> withFlink = new ArrayList<>(List.of(forBeam));
        withFlink.addAll(flink);
        options =
            PipelineOptionsFactory.fromArgs(withFlink.toArray(String[]::new))
                .withValidation()
                .as(type);
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(firstLine(e), e);
    }
    if (options instanceof OutputOptions output) {
      output.setGivenArgs(List.of(args));
    }
    DirectOptions direct = options.as(DirectOptions.class);
    if (!given.containsKey("enforceImmutability")) {
      direct.setEnforceImmutability(false);
    }
    if (!given.containsKey("enforceEncodability")) {
      direct.setEnforceEncodability(false);
    }
    if (!given.containsKey("targetParallelism")) {
      direct.setTargetParallelism(
          directRunnerParallelism(Runtime.getRuntime().availableProcessors()));
    } else if (direct.getTargetParallelism() < 1) {
      throw new IllegalArgumentException(
          "--targetParallelism="
              + direct.getTargetParallelism()
              + " is not accepted: the DirectRunner's thread pool size is a positive integer"
              + " (default: one less than the processors, at least 1)");
    }
    RunnerSettings.apply(options, given);
    return options;
  }

  /**
   * The DirectRunner's thread pool size the jobs use unless {@code --targetParallelism} is given:
   * one less than the processors, at least one. The DirectRunner's scheduler ({@code
   * QuiescenceDriver}) runs in that pool as a task that resubmits itself without waiting, so it
   * keeps one thread busy whenever it has one: with Beam's default ({@code max(processors, 3)}) it
   * spins beside every bundle and, on two processors, takes a core from the job's one reading stage
   * and from the JIT. With {@code processors - 1} threads one processor is left to it, the JIT and
   * the garbage collector; with one thread (one or two processors) it runs between bundles, never
   * beside them. Measured on two processors (docs/performance.md): 300 one-row batches 35.6 s
   * instead of 54.6 s, 1,000,000 rows in one batch 38.5 s instead of 53.8 s.
   *
   * @param processors the processors the JVM may use
   * @return the pool size, at least 1
   */
  static int directRunnerParallelism(int processors) {
    return Math.max(1, processors - 1);
  }

  /**
   * Checks a command line against the options {@code type} and Beam's registered interfaces know,
   * before Beam parses it: for every command line built on {@link PipelineOptionsFactory} (the
   * jobs, the benchmark), which then parses the returned arguments.
   *
   * @param args the command line
   * @param type the options interface it is parsed as
   * @param optionsDoc the page that lists the options, named by an unknown option's line, e.g.
   *     {@code docs/performance.md}
   * @return the arguments for Beam: {@code args} with each enum option's value given as its
   *     constant's name ({@code --isolationLevel=readCommitted} as {@code READ_COMMITTED})
   * @throws IllegalArgumentException one line, without a leading {@code error:}, naming the option
   *     and what it accepts
   */
  public static String[] checked(
      String[] args, Class<? extends PipelineOptions> type, String optionsDoc) {
    return OptionCheck.check(args, type, optionsDoc);
  }

  /**
   * The value of option {@code name} as the user typed it, for a message refusing it: the last
   * {@code --name=value} of the command line {@link #parse} kept ({@link
   * OutputOptions#getGivenArgs}), or else {@code parsed} as text (a default, or options made
   * without a command line).
   *
   * @param options the parsed options
   * @param name the option's name, without {@code --}
   * @param parsed the value Beam parsed
   * @return e.g. {@code -1} for {@code --pollIntervalSeconds=-1}, where the parsed double reads
   *     {@code -1.0}
   */
  public static String typed(PipelineOptions options, String name, Object parsed) {
    if (options instanceof OutputOptions output && output.getGivenArgs() != null) {
      List<String> typed = values(output.getGivenArgs().toArray(String[]::new), name);
      if (!typed.isEmpty()) {
        return typed.get(typed.size() - 1);
      }
    }
    return String.valueOf(parsed);
  }

  public static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }

  /**
   * The values of the option {@code name} as they stand on the command line, one per occurrence, in
   * order, not split at commas ({@code --name=v}; a bare {@code --name} is {@code true}, as Beam
   * reads it); empty when the option is not given.
   */
  public static List<String> values(String[] args, String name) {
    return given(args).getOrDefault(name, List.of());
  }

  /** The options on the command line by name, each with its values in order. */
  static Map<String, List<String>> given(String[] args) {
    Map<String, List<String>> given = new LinkedHashMap<>();
    for (String arg : args) {
      if (arg == null || !arg.startsWith("--")) {
        continue;
      }
      int eq = arg.indexOf('=');
      String name = eq < 0 ? arg.substring(2) : arg.substring(2, eq);
      // Beam reads a bare --name as --name=true.
      String value = eq < 0 ? "true" : arg.substring(eq + 1);
      given.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }
    return given;
  }

  /**
   * A vacuum's retention given in hours.
   *
   * @param option the option's name, without {@code --}
   * @param hours the value
   * @return the retention
   * @throws IllegalArgumentException below 1 hour: {@code --<option> must be a whole number of
   *     hours, at least 1 (a shorter retention can delete the files of a write in flight), not
   *     '<hours>'}
   */
  public static java.time.Duration retentionHours(String option, long hours) {
    if (hours < 1) {
      throw new IllegalArgumentException(
          "--"
              + option
              + " must be a whole number of hours, at least 1 (a shorter retention can delete the"
              + " files of a write in flight), not '"
              + hours
              + "'");
    }
    return java.time.Duration.ofHours(hours);
  }

  /**
   * {@code value} of option {@code option} when it is not empty.
   *
   * @throws IllegalArgumentException {@code --<option> must not be empty}
   */
  public static String required(String option, @Nullable String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("--" + option + " must not be empty");
    }
    return value;
  }

  /**
   * A Delta table's path or URI given as option {@code option}, {@link TablePaths#normalize
   * normalized}.
   *
   * @throws IllegalArgumentException naming the option: empty, or not a path or URI
   */
  public static String tablePath(String option, @Nullable String value) {
    required(option, value);
    try {
      return TablePaths.normalize(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + option + ": " + e.getMessage());
    }
  }

  /**
   * The Delta table an input option names (normalized), which must exist: a job whose input is
   * missing has nothing to work on, and a mistyped path is the user's to fix, not a run that "found
   * nothing" and exits 0.
   *
   * @param tables the Delta access
   * @param option the option's name without {@code --}, e.g. {@code bronze}
   * @param path the table's normalized path or URI
   * @param defaulted null when the command line gave the option; else how the default came about,
   *     printed in parentheses after the path, e.g. {@code the default for
   *     --captureInstance=dbo_prat}
   * @param what what to give instead, e.g. {@code give the bronze table the main job wrote}
   * @return {@code path}
   * @throws OptionRefusedException {@code --<option> <path>[ (<defaulted>)] holds no Delta table
   *     (no _delta_log with a commit): <what>}
   */
  public static String existingTable(
      org.lakecdc.transforms.delta.DeltaTables tables,
      String option,
      String path,
      @Nullable String defaulted,
      String what) {
    if (!tables.exists(path)) {
      throw new OptionRefusedException(
          "--"
              + option
              + " "
              + path
              + (defaulted == null ? "" : " (" + defaulted + ")")
              + " holds no Delta table (no _delta_log with a commit): "
              + what);
    }
    return path;
  }

  /**
   * How the default of an option derived from {@code --captureInstance} came about, for {@link
   * #existingTable}: {@code the default for --captureInstance=<ci>} when the command line names the
   * capture instance, else {@code the default}.
   */
  public static String defaultFor(String[] args, String captureInstance) {
    return values(args, "captureInstance").isEmpty()
        ? "the default"
        : "the default for --captureInstance=" + captureInstance;
  }

  /**
   * Refuses an output Delta table whose location cannot hold one, before any work: a local path
   * where a plain file stands, or below one (a table is a directory). Other URIs (a store's scheme)
   * are left to the store.
   *
   * @param option the option's name without {@code --}, e.g. {@code report}
   * @param path the table's normalized path or URI
   * @return {@code path}
   * @throws OptionRefusedException {@code --<option> must be a Delta table's directory (existing or
   *     to create), not the file '<path>'}, or {@code --<option> <path> cannot be created: <file>
   *     is a file, not a directory; choose a path whose parents are directories}
   */
  public static String writableTableLocation(String option, String path) {
    java.util.Optional<java.nio.file.Path> local = localPath(path);
    if (local.isEmpty()) {
      return path;
    }
    if (java.nio.file.Files.isRegularFile(local.get())) {
      throw new OptionRefusedException(
          "--"
              + option
              + " must be a Delta table's directory (existing or to create), not the file '"
              + path
              + "'");
    }
    fileInTheWay(option, path, local.get());
    return path;
  }

  /**
   * Refuses an output file the job could not write at its end, before any work: a directory at its
   * path, or a plain file above it.
   *
   * @param option the option's name without {@code --}, e.g. {@code html}
   * @param value the file's path as given
   * @throws OptionRefusedException {@code --<option> <path> is a directory: name a file in it}, or
   *     {@code --<option> <path> cannot be created: <file> is a file, not a directory; choose a
   *     path whose parents are directories}
   */
  public static void writableFile(String option, String value) {
    java.nio.file.Path file;
    try {
      file = java.nio.file.Path.of(value).toAbsolutePath().normalize();
    } catch (java.nio.file.InvalidPathException e) {
      throw new OptionRefusedException("--" + option + " '" + value + "' is not a file's path");
    }
    if (java.nio.file.Files.isDirectory(file)) {
      throw new OptionRefusedException(
          "--" + option + " " + file + " is a directory: name a file (in it, or elsewhere)");
    }
    fileInTheWay(option, file.toString(), file);
  }

  /**
   * Refuses an output directory below a plain file, before any work.
   *
   * @param option the option's name without {@code --}, e.g. {@code exportPath}
   * @param directory the directory
   * @throws OptionRefusedException {@code --<option> <path> cannot be created: <file> is a file,
   *     not a directory; choose a path whose parents are directories}
   */
  public static void writableDirectory(String option, java.nio.file.Path directory) {
    java.nio.file.Path absolute = directory.toAbsolutePath().normalize();
    fileInTheWay(option, absolute.toString(), absolute);
  }

  /** A plain file at one of {@code local}'s parents makes {@code local} impossible to create. */
  private static void fileInTheWay(String option, String shown, java.nio.file.Path local) {
    for (java.nio.file.Path up = local.getParent(); up != null; up = up.getParent()) {
      if (java.nio.file.Files.isDirectory(up)) {
        return;
      }
      if (java.nio.file.Files.exists(up)) {
        throw new OptionRefusedException(
            "--"
                + option
                + " "
                + shown
                + " cannot be created: "
                + up
                + " is a file, not a directory; choose a path whose parents are directories");
      }
    }
  }

  /** The local file system path of a normalized table path, or empty for another scheme. */
  private static java.util.Optional<java.nio.file.Path> localPath(String normalized) {
    if (SCHEME.matcher(normalized).find()) {
      return java.util.Optional.empty();
    }
    try {
      return java.util.Optional.of(java.nio.file.Path.of(normalized));
    } catch (java.nio.file.InvalidPathException e) {
      return java.util.Optional.empty();
    }
  }

  /** A URI scheme at the start of a path: {@code s3a:}, {@code abfss:}. */
  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

  /**
   * The simulator at {@code --fakePath} (the demo's directory when null) that a job reads what an
   * earlier run wrote from.
   *
   * @param readFrom what was read from it, for the message ({@code silver's bronze was read from})
   * @throws IllegalArgumentException {@code --fakePath <path> holds no simulator database (...):
   *     give the --fakePath <readFrom>}
   */
  public static org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory simulator(
      @Nullable String fakePath, String readFrom) {
    java.nio.file.Path path =
        fakePath == null
            ? org.lakecdc.pipelines.demo.DemoDatabase.DEFAULT_DIRECTORY
            : java.nio.file.Path.of(required("fakePath", fakePath));
    if (!TableReading.isSimulator(path)) {
      throw new IllegalArgumentException(
          "--fakePath "
              + path
              + " holds no simulator database (no server.json; docs/fake-format.md describes the"
              + " directory): give the --fakePath "
              + readFrom);
    }
    return new org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory(path.toString());
  }

  /**
   * The columns of {@code --keys}, or empty when it is not given.
   *
   * @throws IllegalArgumentException for an empty column or a column listed twice (ignoring case)
   */
  public static List<String> keys(String value) {
    if (value == null) {
      return List.of();
    }
    List<String> keys = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (String key : value.split(",", -1)) {
      if (key.isBlank()) {
        throw new IllegalArgumentException(
            "--keys must list captured columns separated by commas (order_id or o_id,line),"
                + " without an empty one: '"
                + value
                + "'");
      }
      if (!seen.add(key.strip().toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "--keys lists the column " + key.strip() + " twice: '" + value + "'");
      }
      keys.add(key.strip());
    }
    return keys;
  }
}
