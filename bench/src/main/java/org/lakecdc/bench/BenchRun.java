package org.lakecdc.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What every measurement of one harness run shares: the options, the output, the bench module's
 * directory and the work directory, the measurements skipped, the figures taken so far (name to
 * value, in the order they were taken) and the rows of the table printed for people; and the means
 * to take a figure: a new run directory ({@link #newRunDir}), one run of the job in its own JVM
 * ({@link #job}), a row of the table ({@link #row}).
 */
final class BenchRun {
  final BenchOptions options;
  final PrintStream out;
  final Path benchDir;
  final Path work;
  final Set<String> skip;

  /** The figures by name, in the order taken; printed as {@code FIGURE} lines. */
  final Map<String, Double> figures = new LinkedHashMap<>();

  /** The start of the run ({@link System#nanoTime()}). */
  final long started = System.nanoTime();

  /** The table's rows: what, its time, its figure. */
  final List<String[]> table = new ArrayList<>();

  private int runNumber;

  /** The run's time account: part name to {wall seconds, CPU seconds}, in the order started. */
  final Map<String, double[]> parts = new LinkedHashMap<>();

  private String part;
  private long partStarted;
  private double partCpuStarted;

  /**
   * @param options the harness's options
   * @param out where the table, the progress lines and the {@code FIGURE} lines go
   * @param benchDir the bench module's directory (the child JVMs' class path files are under it)
   * @param skip the measurements to skip ({@link Bench#PARTS})
   */
  BenchRun(BenchOptions options, PrintStream out, Path benchDir, Set<String> skip) {
    this.options = options;
    this.out = out;
    this.benchDir = benchDir;
    this.work =
        options.getWorkDir() != null
            ? Path.of(options.getWorkDir()).toAbsolutePath()
            : benchDir.resolve("target/bench-work");
    this.skip = skip;
  }

  /**
   * A new, empty directory {@code <work>/runs/<NN>-<label>} ({@code NN} counts this run's
   * directories from 01); one an earlier run of the harness left there is deleted first.
   *
   * @throws UncheckedIOException when it cannot be created
   */
  Path newRunDir(String label) {
    Path dir =
        work.resolve("runs").resolve(String.format(Locale.ROOT, "%02d-%s", ++runNumber, label));
    SourceDatabase.delete(dir);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create " + dir, e);
    }
    return dir;
  }

  /**
   * Starts the part {@code name} of the run's time account ({@link #parts}) and ends the one
   * before; {@code null} only ends it. A part started again adds to its earlier time. Its CPU
   * seconds are this JVM's and those of the child JVMs it waited for ({@link #cpuSeconds}).
   */
  void part(String name) {
    long now = System.nanoTime();
    double cpu = cpuSeconds();
    if (part != null) {
      double[] t = parts.computeIfAbsent(part, k -> new double[2]);
      t[0] += (now - partStarted) / 1e9;
      t[1] += cpu - partCpuStarted;
    }
    part = name;
    partStarted = now;
    partCpuStarted = cpu;
  }

  /**
   * CPU seconds this JVM and the child processes it has waited for have used so far: the sum of
   * {@code utime}, {@code stime}, {@code cutime} and {@code cstime} of Linux's {@code
   * /proc/self/stat} (proc(5)), in clock ticks of 1/100 s (the {@code USER_HZ} of every Linux
   * kernel's user-space ABI); NaN where there is no such file (not Linux). A child JVM's CPU counts
   * once it has exited and been waited for.
   */
  static double cpuSeconds() {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
      // Fields after the command name, which is in parentheses and may hold spaces: the 12th to
      // 15th of them are utime, stime, cutime, cstime (fields 14 to 17 of proc(5)).
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" +");
      long ticks = 0;
      for (int i = 11; i <= 14; i++) {
        ticks += Long.parseLong(f[i]);
      }
      return ticks / 100.0;
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /**
   * Adds a row to the table: {@code seconds} (NaN: none) with {@code secondsUnit}, and {@code
   * value} with {@code unit}, both with four significant digits.
   */
  void row(String what, double seconds, String secondsUnit, double value, String unit) {
    table.add(
        new String[] {
          what,
          Double.isNaN(seconds) ? "" : Bench.fmt(seconds) + " " + secondsUnit,
          Bench.fmt(value) + " " + unit
        });
  }

  /**
   * What the job JVM measured, and the run directory its tables are in: wall seconds, the heap
   * after GC in MiB, the JVM's CPU seconds over the same span (all its threads; NaN when the JVM
   * did not measure it), and the change rows per second of the stream phase by the job's own
   * summary ({@link #streamRate}; NaN when its console output has no {@code Done in} line).
   */
  record Probe(
      double seconds, double heapMb, Path run, double cpuSeconds, double streamRowsPerSecond) {
    /** Cores the job kept busy on average: CPU seconds over wall seconds (NaN: not measured). */
    double cores() {
      return cpuSeconds / seconds;
    }
  }

  /** The summary's {@code ... in 5.5 s of streaming, 180,692 change rows/s}. */
  private static final Pattern STREAM_RATE =
      Pattern.compile("in [0-9.]+ s of streaming, ([0-9,]+) change rows?/s");

  /**
   * The change rows per second of the stream phase the job printed in its summary ({@code Done in N
   * s: ... in S s of streaming, R change rows/s}: from reading {@code max_lsn} to the end of the
   * change pipeline, its batches read and committed; without the JVM's start, the option checks,
   * the tables' creation and the planning before it, nor the summary after it).
   *
   * @param output the job's console output
   * @return R, or NaN when the output has no such line
   */
  static double streamRate(Path output) {
    try {
      Matcher m = STREAM_RATE.matcher(Files.readString(output, StandardCharsets.UTF_8));
      double rate = Double.NaN;
      while (m.find()) {
        rate = Double.parseDouble(m.group(1).replace(",", ""));
      }
      return rate;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the job's output " + output, e);
    }
  }

  /**
   * Runs the job once in its own JVM on a new set of tables and checks that bronze holds {@code
   * expectedRows} rows.
   */
  Probe job(String label, Path db, int maxCommitsPerBatch, String runner, long expectedRows)
      throws InterruptedException {
    return job(label, db, maxCommitsPerBatch, runner, expectedRows, null, null, List.of());
  }

  /**
   * {@link #job(String, Path, int, String, long)} with the tables under {@code tableRoot} (a URI;
   * null: the run directory), bronze counted at {@code bronzeOnDisk}, and more options (one that
   * the job's command line already has, such as {@code --bootstrap=true}, replaces it).
   */
  Probe job(
      String label,
      Path db,
      int maxCommitsPerBatch,
      String runner,
      long expectedRows,
      String tableRoot,
      Path bronzeOnDisk,
      List<String> more)
      throws InterruptedException {
    return job(
        label,
        db,
        maxCommitsPerBatch,
        runner,
        expectedRows,
        tableRoot,
        bronzeOnDisk,
        more,
        !runner.equals("DirectRunner"));
  }

  /**
   * {@link #job(String, Path, int, String, long, String, Path, List)} in a JVM started with every
   * runner's class path and JVM options when {@code allRunners} ({@link #jobClasspath(boolean)},
   * {@link #jobJvmArgs(boolean)}), the DirectRunner's own otherwise (the DirectRunner only).
   */
  Probe job(
      String label,
      Path db,
      int maxCommitsPerBatch,
      String runner,
      long expectedRows,
      String tableRoot,
      Path bronzeOnDisk,
      List<String> more,
      boolean allRunners)
      throws InterruptedException {
    Path run = newRunDir(label);
    Path probe = run.resolve("probe.properties");
    List<String> args = new ArrayList<>(List.of(probe.toString()));
    List<String> job = jobArgs(db, run, maxCommitsPerBatch, runner);
    if (tableRoot != null) {
      job.replaceAll(
          a ->
              a.startsWith("--target=")
                  ? "--target=" + tableRoot + "/bronze"
                  : a.startsWith("--factsTable=")
                      ? "--factsTable=" + tableRoot + "/facts"
                      : a.startsWith("--controlTable=")
                          ? "--controlTable=" + tableRoot + "/control"
                          : a);
    }
    for (String option : more) {
      int eq = option.indexOf('=');
      String name = eq < 0 ? option : option.substring(0, eq + 1);
      int given = -1;
      for (int i = 0; i < job.size() && eq >= 0; i++) {
        if (job.get(i).startsWith(name)) {
          given = i;
        }
      }
      if (given >= 0) {
        job.set(given, option);
      } else {
        job.add(option);
      }
    }
    args.addAll(job);
    ChildJvm jvm = runJob(allRunners, args, run);
    long bronzeRows =
        new BronzeTable(bronzeOnDisk != null ? bronzeOnDisk : run.resolve("bronze")).rows();
    if (bronzeRows != expectedRows) {
      throw new IllegalStateException(
          "the job's bronze table holds "
              + bronzeRows
              + " rows, not the "
              + expectedRows
              + " inserted; see "
              + jvm.log());
    }
    Properties p = new Properties();
    try {
      p.load(Files.newBufferedReader(probe, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the job's measures " + probe, e);
    }
    double seconds = Long.parseLong(p.getProperty("elapsed_ms")) / 1000.0;
    double heapMb = Long.parseLong(p.getProperty("heap_after_gc_max_bytes")) / (1024.0 * 1024);
    long cpuMs = Long.parseLong(p.getProperty("cpu_ms", "-1"));
    double cpuSeconds = cpuMs < 0 ? Double.NaN : cpuMs / 1000.0;
    out.printf(
        Locale.ROOT,
        "  %-24s %s, maxCommitsPerBatch=%d: %.1f s, CPU %.1f s (gc %s ms, jit %s ms), heap after"
            + " GC %.0f MB%n",
        label,
        runner,
        maxCommitsPerBatch,
        seconds,
        cpuSeconds,
        p.getProperty("gc_ms", "?"),
        p.getProperty("jit_ms", "?"),
        heapMb);
    String byThread = p.getProperty("cpu_by_thread", "");
    if (!byThread.isEmpty()) {
      out.printf(Locale.ROOT, "  %-24s CPU s by thread: %s%n", "", byThread);
    }
    return new Probe(seconds, heapMb, run, cpuSeconds, streamRate(run.resolve("job-output.log")));
  }

  /**
   * Runs the job in a child JVM on {@code runner} under {@link JobProbe} ({@code args}: the probe's
   * file, then the job's options), its output in {@code run}'s {@code job-output.log}, and waits
   * for it (at most six hours).
   *
   * @return the ended JVM (its log, exit checked by {@link ChildJvm#await})
   * @throws InterruptedException when the waiting thread is interrupted
   */
  ChildJvm runJob(String runner, List<String> args, Path run) throws InterruptedException {
    return runJob(!runner.equals("DirectRunner"), args, run);
  }

  /**
   * {@link #runJob(String, List, Path)} with every runner's class path and JVM options when {@code
   * allRunners}, the DirectRunner's own otherwise.
   */
  private ChildJvm runJob(boolean allRunners, List<String> args, Path run)
      throws InterruptedException {
    ChildJvm jvm =
        ChildJvm.start(
            jobClasspath(allRunners),
            jobJvmArgs(allRunners),
            JobProbe.class.getName(),
            args,
            run.resolve("job-output.log"));
    jvm.await(6 * 3600);
    return jvm;
  }

  /** The job's command line for a run directory (its tables and log file live there). */
  static List<String> jobArgs(Path db, Path run, int maxCommitsPerBatch, String runner) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + db,
                "--captureInstance=" + Orders.CAPTURE_INSTANCE,
                "--target=" + run.resolve("bronze"),
                "--factsTable=" + run.resolve("facts"),
                "--controlTable=" + run.resolve("control"),
                "--bootstrap=false",
                "--maxCommitsPerBatch=" + maxCommitsPerBatch,
                "--logFile=" + run.resolve("job.log"),
                "--runner=" + runner));
    if (runner.equals("SparkRunner")) {
      args.add("--sparkMaster=local[2]");
    } else if (runner.equals("FlinkRunner")) {
      args.add("--flinkMaster=[local]");
      args.add("--parallelism=2");
    }
    return args;
  }

  /** The class path of the job's child JVM on {@code runner} (from the files the build writes). */
  String jobClasspath(String runner) {
    return jobClasspath(!runner.equals("DirectRunner"));
  }

  /**
   * The job's class path with every runner (the DirectRunner, Spark's and Flink's with their
   * engines: {@code job-classpath-all-runners.txt}) when {@code allRunners}, with the DirectRunner
   * only ({@code job-classpath.txt}) otherwise.
   */
  String jobClasspath(boolean allRunners) {
    Path target = benchDir.resolve("target");
    return ChildJvm.classpath(
        target.resolve(allRunners ? "job-classpath-all-runners.txt" : "job-classpath.txt"),
        target.resolve("classes"));
  }

  /**
   * The job's child JVM options on {@code runner}: {@code -Xmx} of {@code --jobHeap}, {@code
   * --jobJvmOptions}, and Spark's opens on any runner but the DirectRunner.
   */
  List<String> jobJvmArgs(String runner) {
    return jobJvmArgs(!runner.equals("DirectRunner"));
  }

  /**
   * The job's child JVM options for {@link #jobClasspath(boolean)}: {@code -Xmx} of {@code
   * --jobHeap}, {@code --jobJvmOptions}, and Spark's opens when {@code allRunners} (Spark on the
   * class path).
   */
  List<String> jobJvmArgs(boolean allRunners) {
    List<String> args = new ArrayList<>(List.of("-Xmx" + options.getJobHeap()));
    if (options.getJobJvmOptions() != null) {
      args.addAll(options.getJobJvmOptions());
    }
    if (allRunners) {
      for (String p : ChildJvm.SPARK_ADD_OPENS) {
        args.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
      }
    }
    return args;
  }

  /**
   * The properties a child JVM wrote to {@code file}.
   *
   * @throws UncheckedIOException when it cannot be read
   */
  static Properties load(Path file) {
    Properties p = new Properties();
    try {
      p.load(Files.newBufferedReader(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the measures " + file, e);
    }
    return p;
  }
}
