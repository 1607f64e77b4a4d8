package org.lakecdc.pipelines.cli;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.util.UserCodeException;
import org.apache.hadoop.util.VersionInfo;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * How every job of this module ends, whatever fails: one {@code error:} line on standard error
 * naming the cause and what to change, an exit code, and a JVM that really exits.
 *
 * <p>Exit codes: {@value #OK} done; {@value #BAD_OPTION} an option value refused before anything
 * runs; {@value #FAILED} a failed run, for any reason, including {@link OutOfMemoryError}, {@link
 * StackOverflowError} and any other {@link Error} on any thread, and a shutdown (Ctrl-C, SIGTERM)
 * that does not finish within its bound.
 *
 * <p>A job's {@code main} hands its body to {@link #main}: the body returns the exit code; a {@link
 * Throwable} that escapes it becomes the error line ({@link #describe}). A default uncaught
 * exception handler sends an {@link Error} on any other thread the same way. On a failure the
 * pipelines still running in this JVM are cancelled ({@link PipelineResult#cancel()}, which shuts
 * the DirectRunner's executors down) before the JVM exits. {@link System#exit} runs the shutdown
 * hooks; a daemon watchdog halts the JVM ({@link Runtime#halt}) with the same code when they have
 * not finished after {@link #GRACE} (a stuck hook, a non-daemon thread that cannot be stopped). A
 * shutdown begun by a signal gets the same watchdog, after the stop allowance of a continuous run
 * ({@link #allowForStop}) plus {@link #GRACE}. Nothing is committed by this path itself: every
 * Delta commit the job made before it is a whole commit, which the rerun continues from.
 */
public final class JobExit {
  /** Exit code of a run that completed. */
  public static final int OK = 0;

  /** Exit code of a failed run, whatever the cause. */
  public static final int FAILED = 1;

  /** Exit code of an option value refused before anything runs. */
  public static final int BAD_OPTION = 2;

  /**
   * Exit code of a run of many tables ({@code --tables}) in which one or more tables failed alone
   * (data loss, a schema change, a missing grant, a disabled capture instance: each recorded as a
   * {@code table_failed} facts row) while the others completed.
   */
  public static final int TABLE_FAILED = 3;

  /**
   * Exit code of a {@code Reconcile} run that found silver different from its source: a MISMATCH
   * bucket, or a key MISSING_TARGET, MISSING_SOURCE or RECORD_DIFF (docs/options.md "Reconcile").
   */
  public static final int MISMATCH = 4;

  /** How long the shutdown hooks may take after a failure before the JVM is halted. */
  public static final Duration GRACE = Duration.ofSeconds(10);

  private static final long MIB = 1024 * 1024;

  /** The pipelines running in this JVM, cancelled on a fatal error. */
  private static final Set<PipelineResult> RUNNING = ConcurrentHashMap.newKeySet();

  /** Whether {@link #main} set this JVM up (the uncaught-exception handler, one error line). */
  private static volatile boolean installed;

  /** Set by the first failure reported once installed: later ones print nothing. */
  private static final AtomicBoolean REPORTED = new AtomicBoolean();

  private static volatile Duration stopAllowance = Duration.ZERO;

  /** Set by {@link #exit}: its own watchdog bounds the shutdown. */
  private static volatile boolean exiting;

  private static final Pattern SCHEME = Pattern.compile("No FileSystem for scheme \"([^\"]*)\"");
  private static final Pattern PATH_URI = Pattern.compile("\\b([a-zA-Z][a-zA-Z0-9+.-]*)://\\S+");
  private static final Pattern MISSING_CLASS = Pattern.compile("Class (\\S+) not found");
  private static final Pattern CREATING_DIRECTORIES =
      Pattern.compile("(?:Creating directories for path|Failed to create directory:) (\\S+)");
  private static final Pattern TABLE_PATH = Pattern.compile("Delta table (\\S+)");

  private JobExit() {}

  /** A job's body: runs the job and returns its exit code. */
  @FunctionalInterface
  public interface Job {
    /**
     * Runs the job.
     *
     * @return the exit code ({@link #OK}, {@link #FAILED} or {@link #BAD_OPTION})
     * @throws Exception anything: it becomes the error line and exit code {@link #FAILED}
     */
    int run() throws Exception;
  }

  /**
   * What a job's {@code main} does: installs the uncaught-exception handler and the shutdown
   * watchdog, runs {@code job}, reports what escapes it, waits for the facts and control
   * compactions still running in the background, and exits the JVM with the code. Never returns.
   *
   * @param job the job's body
   */
  public static void main(Job job) {
    install();
    int code;
    try {
      code = job.run();
    } catch (Throwable t) {
      code = report(t, System.err, false);
    }
    awaitCompactions();
    exit(code);
  }

  /**
   * Lets the background compactions of facts and control the run started finish ({@link
   * HadoopConf#awaitSharedCompactions}): before the JVM exits, and before the main job prints its
   * summary, so that their {@code Delta table …: compacted …} lines come before it; one that fails
   * is only logged, and a process killed before its commit leaves the table as it was. Returns at
   * once when none is queued or running; an interrupt is kept on the thread.
   */
  public static void awaitCompactions() {
    try {
      HadoopConf.awaitSharedCompactions();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Runs {@code pipeline} to its end: on the DirectRunner without blocking in {@code run()} (so the
   * result is known, and cancelled, while it runs), then waits until it finishes. When the pipeline
   * fails, it is cancelled (its executors shut down) before the failure is rethrown.
   *
   * @param pipeline the pipeline to run
   * @return its result, finished
   * @throws org.apache.beam.sdk.Pipeline.PipelineExecutionException what the runner reports for a
   *     failure of the job's code; any other {@link RuntimeException} or {@link Error} as the
   *     runner throws it
   * @throws IllegalStateException when the pipeline ended FAILED or CANCELLED without an error
   */
  public static PipelineResult run(Pipeline pipeline) {
    PipelineOptions options = pipeline.getOptions();
    boolean direct =
        options.getRunner() != null && DirectRunner.class.isAssignableFrom(options.getRunner());
    PipelineResult result = null;
    try {
      if (direct) {
        DirectOptions directOptions = options.as(DirectOptions.class);
        boolean blockOnRun = directOptions.isBlockOnRun();
        directOptions.setBlockOnRun(false);
        try {
          result = pipeline.run();
        } finally {
          directOptions.setBlockOnRun(blockOnRun);
        }
      } else {
        result = pipeline.run();
      }
      RUNNING.add(result);
      PipelineResult.State state = result.waitUntilFinish();
      if (state == PipelineResult.State.FAILED || state == PipelineResult.State.CANCELLED) {
        throw new IllegalStateException(
            "The pipeline ended " + state + " without an error from the runner");
      }
      return result;
    } catch (RuntimeException | Error e) {
      if (result != null) {
        cancel(result, e);
      }
      throw e;
    } finally {
      if (result != null) {
        RUNNING.remove(result);
      }
    }
  }

  /**
   * How long a shutdown may take before the watchdog halts the JVM, beyond {@link #GRACE}: a
   * continuous run sets its clean stop's bound (commit the batch in progress) while it runs, and
   * {@link Duration#ZERO} after.
   *
   * @param allowance the extra time, not negative
   */
  public static void allowForStop(Duration allowance) {
    stopAllowance = allowance;
  }

  /**
   * The exit code of a job that threw {@code t}, after its one {@code error:} line (the stack trace
   * before it when {@code verbose}): {@link #BAD_OPTION} (2) for an option refused once the source
   * was looked at ({@link OptionRefusedException}), {@link #FAILED} (1) for another bad argument or
   * a problem with the source ({@code CdcException}), and {@link #report} for anything else. The
   * one block every job's {@code run} ends with.
   *
   * @param t what the job threw
   * @param err where the line goes
   * @param verbose whether the stack trace is printed first
   * @return {@link #BAD_OPTION} or {@link #FAILED}
   */
  public static int failed(Throwable t, PrintStream err, boolean verbose) {
    if (t instanceof IllegalArgumentException || t instanceof CdcException) {
      if (verbose) {
        t.printStackTrace(err);
      }
      for (String line : errorLines(t)) {
        err.println("error: " + line);
      }
      return t instanceof OptionRefusedException ? BAD_OPTION : FAILED;
    }
    return report(t, err, verbose);
  }

  /**
   * Reports a failure: cancels the pipelines still running, prints the stack trace when {@code
   * verbose}, then the one line {@code error: <describe(failure)>}. Once {@link #main} runs, only
   * the first failure of the JVM is printed (an {@link Error} on a worker may reach both the
   * uncaught-exception handler and the main thread).
   *
   * @param failure what escaped the job
   * @param err where the line goes
   * @param verbose whether the stack trace is printed first
   * @return {@link #FAILED}
   */
  public static int report(Throwable failure, PrintStream err, boolean verbose) {
    cancelAll(failure);
    if (installed && !REPORTED.compareAndSet(false, true)) {
      return FAILED;
    }
    if (verbose) {
      failure.printStackTrace(err);
    }
    err.println("error: " + describe(failure));
    err.flush();
    return FAILED;
  }

  /**
   * The error line for a failure, without {@code error: }: its cause and what to change, on one
   * line. The cause chain is walked (cycles and wrappers included), first for what the user can act
   * on:
   *
   * <ul>
   *   <li>{@link OutOfMemoryError}: the JVM's maximum heap ({@link Runtime#maxMemory()} in MiB),
   *       {@code -Xmx} ({@code MAVEN_OPTS} for {@code mvn exec:java}) and {@code
   *       --maxCommitsPerBatch}; for metaspace, {@code -XX:MaxMetaspaceSize}.
   *   <li>{@link StackOverflowError}: where, and {@code -Xss}.
   *   <li>"No space left on device" anywhere in the chain: that, with the table or file path the
   *       chain names.
   *   <li>No Hadoop {@code FileSystem} for a URI's scheme (a missing class such as {@code
   *       S3AFileSystem}, or {@code No FileSystem for scheme}): the dependency that provides it
   *       (none of the default build, {@code -Pspark}, {@code -Pflink} bundles one).
   *   <li>A table directory that cannot be created (Kernel's {@code Creating directories for path
   *       …}): the nearest existing parent and why (a file, not writable, a read-only file system).
   *   <li>Otherwise: the job's own errors ({@link IllegalArgumentException}, {@link CdcException})
   *       by their first line; anything else by its class and first line, with the hint that {@code
   *       --verbose} prints the stack trace. A failure inside a pipeline is prefixed {@code the run
   *       failed: }.
   * </ul>
   *
   * @param failure what escaped the job
   * @return one line
   */
  public static String describe(Throwable failure) {
    List<Throwable> chain = chain(failure);
    boolean inPipeline =
        chain.stream()
            .anyMatch(
                t ->
                    t instanceof Pipeline.PipelineExecutionException
                        || t instanceof UserCodeException);
    String prefix = inPipeline ? "the run failed: " : "";
    for (Throwable t : chain) {
      if (t instanceof OutOfMemoryError oom) {
        return prefix + outOfMemory(oom);
      }
    }
    for (Throwable t : chain) {
      if (t instanceof StackOverflowError so) {
        return prefix + stackOverflow(so);
      }
    }
    for (Throwable t : chain) {
      if (t.getMessage() != null
          && t.getMessage().toLowerCase(Locale.ROOT).contains("no space left on device")) {
        return prefix + noSpace(chain);
      }
    }
    Optional<String> fileSystem = missingFileSystem(chain);
    if (fileSystem.isPresent()) {
      return prefix + fileSystem.get();
    }
    for (Throwable t : chain) {
      Matcher m = CREATING_DIRECTORIES.matcher(String.valueOf(t.getMessage()));
      if (m.find()) {
        return prefix + cannotCreate(m.group(1));
      }
    }
    Throwable cause = telling(chain);
    if (cause instanceof IllegalArgumentException || cause instanceof CdcException) {
      return prefix + firstLine(cause);
    }
    String message = firstLine(cause);
    String name = cause.getClass().getSimpleName();
    return prefix
        + (cause.getMessage() == null || message.startsWith(cause.getClass().getName())
            ? message
            : name + ": " + message)
        + " (--verbose prints the stack trace)";
  }

  /** Installs the uncaught-exception handler and the shutdown watchdog; once per JVM. */
  private static synchronized void install() {
    if (installed) {
      return;
    }
    installed = true;
    Thread.setDefaultUncaughtExceptionHandler(
        handler(Thread.getDefaultUncaughtExceptionHandler(), System.err, JobExit::exit));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  if (!exiting) {
                    watchdog(stopAllowance.plus(GRACE), FAILED, true);
                  }
                },
                "lakecdc-exit-watchdog"));
  }

  /**
   * The default uncaught-exception handler: an {@link Error} on any thread (but {@link
   * ThreadDeath}, a thread stopped on purpose) is reported ({@link #report}) and ends the JVM
   * through {@code exit} with {@link #FAILED}; an exception goes to {@code previous} (the JVM's
   * default prints it), since a library's thread may die of one without the job failing. Threads
   * whose thread group handles its own (as {@code mvn exec:java}'s does) never reach it: there the
   * runner hands a worker's error to the main thread, which ends the job the same way.
   */
  public static Thread.UncaughtExceptionHandler handler(
      Thread.UncaughtExceptionHandler previous, PrintStream err, IntConsumer exit) {
    return (thread, failure) -> {
      if (failure instanceof Error && !(failure instanceof ThreadDeath)) {
        exit.accept(report(failure, err, false));
      } else if (previous != null) {
        previous.uncaughtException(thread, failure);
      } else {
        err.print("Exception in thread \"" + thread.getName() + "\" ");
        failure.printStackTrace(err);
      }
    };
  }

  /**
   * Exits the JVM with {@code code}: starts the watchdog that halts it after {@link #GRACE}, then
   * calls {@link System#exit} (which may block behind a shutdown already under way).
   */
  static void exit(int code) {
    exiting = true;
    Thread watchdog = new Thread(() -> watchdog(GRACE, code, false), "lakecdc-exit-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    System.exit(code);
  }

  private static void watchdog(Duration after, int code, boolean shutdownHook) {
    Runnable halt =
        () -> {
          try {
            Thread.sleep(after.toMillis());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          // One error line per run: after a reported failure, or a run that ended well, a note.
          String text =
              String.format(
                  "the JVM did not exit within %d s of %s: a shutdown hook or thread is stuck;"
                      + " halted with exit code %d",
                  after.toSeconds(),
                  shutdownHook
                      ? "being asked to stop"
                      : code == OK ? "the end of the run" : "the failure",
                  code);
          System.err.println(REPORTED.get() || code == OK ? "(" + text + ")" : "error: " + text);
          System.err.flush();
          Runtime.getRuntime().halt(code);
        };
    if (shutdownHook) {
      // A hook must return for the shutdown to go on: the wait runs on a daemon thread.
      Thread t = new Thread(halt, "lakecdc-halt");
      t.setDaemon(true);
      t.start();
    } else {
      halt.run();
    }
  }

  private static void cancelAll(Throwable failure) {
    for (PipelineResult result : List.copyOf(RUNNING)) {
      cancel(result, failure);
    }
  }

  private static void cancel(PipelineResult result, Throwable failure) {
    try {
      PipelineResult.State state = result.getState();
      if (state != PipelineResult.State.DONE && state != PipelineResult.State.CANCELLED) {
        result.cancel();
      }
    } catch (IOException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // The error line
  // ------------------------------------------------------------------------------------------

  private static String outOfMemory(OutOfMemoryError oom) {
    String what = oom.getMessage() == null ? "Java heap space" : firstLine(oom);
    long heapMib = Runtime.getRuntime().maxMemory() / MIB;
    if (what.contains("Metaspace")) {
      return "out of memory (OutOfMemoryError: "
          + what
          + "): raise -XX:MaxMetaspaceSize (java -XX:MaxMetaspaceSize=1g …; for mvn exec:java,"
          + " MAVEN_OPTS=-XX:MaxMetaspaceSize=1g)";
    }
    if (what.contains("native thread")) {
      return "out of memory (OutOfMemoryError: "
          + what
          + "): the system refused another thread; lower --numPartitions or raise the user's"
          + " process limit (ulimit -u)";
    }
    return String.format(
        "out of memory (OutOfMemoryError: %s) with a maximum heap of %,d MiB: give the JVM more"
            + " (java -Xmx%dm …; for mvn exec:java, MAVEN_OPTS=-Xmx%dm) or read fewer commits per"
            + " batch (--maxCommitsPerBatch; one transaction is always read whole)",
        what, heapMib, suggestedHeap(heapMib), suggestedHeap(heapMib));
  }

  /** Twice the heap, rounded up to a multiple of 512 MiB. */
  private static long suggestedHeap(long heapMib) {
    return Math.max(1024, (heapMib * 2 + 511) / 512 * 512);
  }

  private static String stackOverflow(StackOverflowError so) {
    StackTraceElement[] frames = so.getStackTrace();
    String where =
        frames.length == 0
            ? ""
            : " in " + frames[0].getClassName() + "." + frames[0].getMethodName();
    return "stack overflow (StackOverflowError"
        + where
        + "): give each thread a larger stack (java -Xss16m …; for mvn exec:java,"
        + " MAVEN_OPTS=-Xss16m)";
  }

  private static String noSpace(List<Throwable> chain) {
    String where = null;
    for (Throwable t : chain) {
      if (t instanceof FileSystemException fs && fs.getFile() != null) {
        where = fs.getFile();
        break;
      }
    }
    if (where == null) {
      for (Throwable t : chain) {
        Matcher m = TABLE_PATH.matcher(String.valueOf(t.getMessage()));
        if (m.find()) {
          where = "Delta table " + strip(m.group(1));
          break;
        }
      }
    }
    if (where == null) {
      for (Throwable t : chain) {
        String message = String.valueOf(t.getMessage());
        int colon = message.indexOf(": /");
        if (t instanceof FileNotFoundException || colon >= 0) {
          where = colon >= 0 ? strip(message.substring(colon + 2)) : message;
          break;
        }
      }
    }
    return "No space left on device"
        + (where == null ? "" : " writing " + where)
        + ": free space there, or choose a location on another disk, then run again (what was"
        + " committed stays committed; the rerun continues from it)";
  }

  private static Optional<String> missingFileSystem(List<Throwable> chain) {
    String scheme = null;
    String missingClass = null;
    for (Throwable t : chain) {
      String message = String.valueOf(t.getMessage());
      Matcher m = SCHEME.matcher(message);
      if (m.find()) {
        scheme = m.group(1);
      }
      if (t instanceof ClassNotFoundException || t instanceof NoClassDefFoundError) {
        Matcher c = MISSING_CLASS.matcher(message);
        missingClass = c.find() ? c.group(1) : message.strip().replace('/', '.');
      }
    }
    if (missingClass != null && scheme == null) {
      scheme = schemeOfClass(missingClass);
      if (scheme == null) {
        for (Throwable t : chain) {
          Matcher u = PATH_URI.matcher(String.valueOf(t.getMessage()));
          if (u.find() && !u.group(1).equals("file")) {
            scheme = u.group(1).toLowerCase(Locale.ROOT);
            break;
          }
        }
      }
      if (scheme == null) {
        return Optional.empty();
      }
    }
    if (scheme == null) {
      return Optional.empty();
    }
    String hadoop = VersionInfo.getVersion();
    String dependency =
        switch (scheme) {
          case "s3a" ->
              "org.apache.hadoop:hadoop-aws:"
                  + hadoop
                  + " and software.amazon.awssdk:s3 with software.amazon.awssdk:apache5-client"
                  + " (the log store's SDK; -Ps3 brings all three)";
          case "s3", "s3n" -> null;
          case "abfs", "abfss", "wasb", "wasbs" -> "org.apache.hadoop:hadoop-azure:" + hadoop;
          case "gs" -> "com.google.cloud.bigdataoss:gcs-connector (its hadoop3 build)";
          case "oss" -> "org.apache.hadoop:hadoop-aliyun:" + hadoop;
          default -> null;
        };
    String what =
        "no Hadoop FileSystem for "
            + scheme
            + ":// paths on the class path"
            + (missingClass != null ? " (class " + missingClass + " not found)" : "");
    if (scheme.equals("s3") || scheme.equals("s3n")) {
      return Optional.of(
          what
              + ": write s3a:// paths and add org.apache.hadoop:hadoop-aws:"
              + hadoop
              + " to the job's class path (the default build, -Pspark and -Pflink bundle none)");
    }
    if (dependency == null) {
      return Optional.of(
          what
              + ": add the jar of a Hadoop FileSystem for '"
              + scheme
              + "' (Hadoop "
              + hadoop
              + ") to the job's class path and name its class with --hadoopConf=fs."
              + scheme
              + ".impl=<class>, or use a local path or file:/ URI");
    }
    return Optional.of(
        what
            + ": add "
            + dependency
            + " to the job's class path (the default build, -Pspark and -Pflink bundle none; with"
            + " spark-submit, --packages)");
  }

  private static String schemeOfClass(String className) {
    Map<String, String> byPackage =
        Map.of(
            "org.apache.hadoop.fs.s3a.", "s3a",
            "software.amazon.awssdk.", "s3a",
            "org.apache.hadoop.fs.azurebfs.SecureAzureBlobFileSystem", "abfss",
            "org.apache.hadoop.fs.azurebfs.", "abfs",
            "org.apache.hadoop.fs.azure.", "wasb",
            "com.google.cloud.hadoop.fs.gcs.", "gs",
            "org.apache.hadoop.fs.aliyun.", "oss");
    String best = null;
    int length = -1;
    for (Map.Entry<String, String> e : byPackage.entrySet()) {
      if (className.startsWith(e.getKey()) && e.getKey().length() > length) {
        best = e.getValue();
        length = e.getKey().length();
      }
    }
    return best;
  }

  private static String cannotCreate(String uri) {
    String location = uri.startsWith("file:") ? uri.substring("file:".length()) : uri;
    while (location.startsWith("//")) {
      location = location.substring(1);
    }
    String why = "the file system refused it";
    String parentText = null;
    if (!uri.contains("://") || uri.startsWith("file:")) {
      try {
        Path parent = Path.of(location).toAbsolutePath().getParent();
        while (parent != null && !Files.exists(parent)) {
          parent = parent.getParent();
        }
        if (parent != null) {
          parentText = parent.toString();
          if (!Files.isDirectory(parent)) {
            why = parent + " is a file, not a directory";
          } else if (!Files.isWritable(parent)) {
            why = parent + " is not writable by user " + System.getProperty("user.name");
          } else {
            why = "the file system at " + parent + " refused it (read-only?)";
          }
        }
      } catch (InvalidPathException | SecurityException e) {
        // Not a local path: the general reason stands.
      }
    }
    return "cannot create the directory "
        + location
        + " of a Delta table: "
        + why
        + "; choose a location the job may write (--target, --factsTable, --controlTable)"
        + (parentText == null ? "" : " or make " + parentText + " writable");
  }

  /** The first throwable of the chain that is not a mere wrapper of its cause. */
  private static Throwable telling(List<Throwable> chain) {
    for (Throwable t : chain) {
      Throwable cause = t.getCause();
      boolean wrapper =
          cause != null
              && (t instanceof Pipeline.PipelineExecutionException
                  || t instanceof UserCodeException
                  || t instanceof InvocationTargetException
                  || t instanceof ExecutionException
                  || t.getMessage() == null
                  || t.getMessage().equals(cause.toString()));
      if (!wrapper) {
        return t;
      }
    }
    return chain.get(chain.size() - 1);
  }

  private static List<Throwable> chain(Throwable failure) {
    List<Throwable> chain = new ArrayList<>();
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }

  private static String strip(String path) {
    return path.replaceAll("[,;:)]+$", "");
  }

  /**
   * What follows {@code error: } for a refused command line, one entry per printed line: every
   * refusal of {@link RefusedLines}, in order; otherwise the first line of the message.
   */
  public static List<String> errorLines(Throwable t) {
    return t instanceof RefusedLines refused ? refused.lines() : List.of(CommandLine.firstLine(t));
  }

  /** The first line of the message, or the throwable itself when it has none. */
  static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }
}
