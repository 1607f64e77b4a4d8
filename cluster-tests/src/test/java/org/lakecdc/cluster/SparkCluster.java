package org.lakecdc.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A Spark 3.5 standalone cluster on loopback: a Master and Workers, each its own JVM started with
 * the Spark home's {@code bin/spark-class} as a distribution's {@code sbin/start-*.sh} start them.
 * The home is laid out from Maven Central: {@code jars/} is cluster-tests/spark-home's copy of
 * Spark's jars, {@code bin/} Spark's launcher scripts (test resources: Maven Central serves no
 * distribution), {@code conf/log4j2.properties} (Spark's default logging with Beam's CSV metrics
 * sink's errors for over-long file names quieted), and a {@code RELEASE} file, by which Spark's
 * launcher knows a distribution's layout. Each Worker launches its executors from this home.
 */
final class SparkCluster implements AutoCloseable {
  /** Each Worker's memory for executors; an executor takes {@link #EXECUTOR_MEMORY} of it. */
  static final String WORKER_MEMORY = "1g";

  static final String EXECUTOR_MEMORY = "768m";

  /**
   * The JIT of every JVM of the cluster (Master, Workers, executors, the driver): C1 only. Each
   * lives for a run of a few minutes on two cores shared by all of them, where C2's compile threads
   * cost more CPU than its faster code gains back.
   */
  static final String JIT = "-XX:TieredStopAtLevel=1";

  final Path home;
  private final Path dir;
  private final int masterPort = ClusterProcess.freePort();
  private final int masterUiPort = ClusterProcess.freePort();
  private ClusterProcess master;
  private final List<ClusterProcess> workers = new ArrayList<>();
  private final List<ClusterProcess> submissions = new ArrayList<>();

  /** More JVM options of the driver and of the executors, each with a leading space, or empty. */
  private String driverOptions = "";

  private String executorOptions = "";

  /** Lays out the Spark home in {@code dir/spark-home}. */
  SparkCluster(Path dir) throws IOException {
    this.dir = dir;
    this.home = dir.resolve("spark-home");
    Files.createDirectories(home.resolve("bin"));
    Files.createDirectories(home.resolve("conf"));
    Files.createSymbolicLink(
        home.resolve("jars"), Path.of(System.getProperty("lakecdc.sparkHomeJars")));
    Files.writeString(
        home.resolve("RELEASE"), "Spark 3.5.3 (Scala 2.12), jars from Maven Central\n");
    for (String script : List.of("spark-class", "spark-submit")) {
      Path target = home.resolve("bin").resolve(script);
      try (InputStream in = SparkCluster.class.getResourceAsStream("/spark-home/bin/" + script)) {
        Files.copy(in, target);
      }
      Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    // Spark's default logging, with Beam's CSV metrics sink's "File name too long" quieted.
    try (InputStream in =
        SparkCluster.class.getResourceAsStream("/spark-home/conf/log4j2.properties")) {
      Files.copy(in, home.resolve("conf/log4j2.properties"));
    }
  }

  /**
   * Adds JVM options to the driver's and the executors' of the submissions from now on (a
   * measurement's flight recordings): the driver's a space-separated list, the executors' one
   * option without spaces ({@code SPARK_SUBMIT_ARGS} is split at spaces), each may be empty.
   */
  SparkCluster javaOptions(String driver, String executor) {
    this.driverOptions = driver.isEmpty() ? "" : " " + driver;
    this.executorOptions = executor.isEmpty() ? "" : " " + executor;
    return this;
  }

  /** {@code spark://127.0.0.1:<port>}. */
  String masterUrl() {
    return "spark://127.0.0.1:" + masterPort;
  }

  /** The environment of every process of the cluster: its home, loopback, small daemons. */
  Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("SPARK_HOME", home.toString());
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("SPARK_LOCAL_IP", "127.0.0.1");
    env.put("SPARK_DAEMON_MEMORY", "384m");
    // The Master's and the Workers' JVM options (Spark's launcher adds them to the daemons').
    env.put("SPARK_DAEMON_JAVA_OPTS", JIT);
    return env;
  }

  /**
   * Starts the Master and {@code workers} Workers of one core each; returns once all registered.
   */
  void start(int workerCount) throws IOException {
    master =
        ClusterProcess.start(
            "Spark Master",
            List.of(
                home.resolve("bin/spark-class").toString(),
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                String.valueOf(masterPort),
                "--webui-port",
                String.valueOf(masterUiPort)),
            env(),
            dir,
            dir.resolve("master.log"));
    master.awaitOutput("I have been elected leader", Duration.ofMinutes(3));
    for (int i = 0; i < workerCount; i++) {
      startWorker();
    }
  }

  /** Starts one more Worker (one core, {@link #WORKER_MEMORY}) and waits until it registered. */
  ClusterProcess startWorker() throws IOException {
    int n = workers.size() + 1;
    ClusterProcess worker =
        ClusterProcess.start(
            "Spark Worker " + n,
            List.of(
                home.resolve("bin/spark-class").toString(),
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
                "--cores",
                "1",
                "--memory",
                WORKER_MEMORY,
                "--work-dir",
                dir.resolve("worker-" + n).toString(),
                masterUrl()),
            env(),
            dir,
            dir.resolve("worker-" + n + ".log"));
    workers.add(worker);
    worker.awaitOutput("Successfully registered with master", Duration.ofMinutes(3));
    return worker;
  }

  /** The Workers started so far, killed ones included, in start order. */
  List<ClusterProcess> workers() {
    return workers;
  }

  /**
   * The executor JVMs a Worker launched and that are running ({@code
   * CoarseGrainedExecutorBackend}).
   */
  static List<ProcessHandle> executors(ClusterProcess worker) {
    return worker.descendants().stream()
        .filter(
            p ->
                p.info()
                    .arguments()
                    .map(a -> String.join(" ", a).contains("CoarseGrainedExecutorBackend"))
                    .orElse(false))
        .toList();
  }

  /**
   * Submits the main job with {@code templates/spark-submit.sh}, as a user would: {@code
   * SPARK_HOME} this cluster's home, {@code SPARK_MASTER} its Master, client deploy mode (the
   * driver in the started process), executors of {@link #EXECUTOR_MEMORY} and one core, driver and
   * executors with {@link #JIT}, an event log in {@code eventLog}.
   */
  ClusterProcess submit(String name, Path options, Path workDir, Path eventLog, String... args)
      throws IOException {
    return submit(name, options, workDir, eventLog, List.of(), args);
  }

  /**
   * Submits the main job as {@link #submit(String, Path, Path, Path, String...)} does, with {@code
   * moreSubmitArgs} (each without spaces: {@code SPARK_SUBMIT_ARGS} is split at spaces) added to
   * spark-submit's arguments ({@link #s3Jars()}, say).
   */
  ClusterProcess submit(
      String name,
      Path options,
      Path workDir,
      Path eventLog,
      List<String> moreSubmitArgs,
      String... args)
      throws IOException {
    Files.createDirectories(eventLog);
    Files.createDirectories(metrics(workDir));
    Map<String, String> env = env();
    env.put("SPARK_MASTER", masterUrl());
    // The driver's JVM options (client mode: the launcher adds them to spark-submit's JVM).
    env.put("SPARK_SUBMIT_OPTS", JIT + driverOptions);
    env.put("LAKECDC_JAR", System.getProperty("lakecdc.sparkJar"));
    env.put(
        "SPARK_SUBMIT_ARGS",
        String.join(
            " ",
            "--driver-memory 768m",
            "--executor-memory " + EXECUTOR_MEMORY,
            "--executor-cores 1",
            "--conf spark.executor.extraJavaOptions=" + JIT,
            executorOptions.isEmpty()
                ? ""
                : "--conf spark.executor.defaultJavaOptions=" + executorOptions.strip(),
            "--conf spark.driver.host=127.0.0.1",
            "--conf spark.ui.enabled=false",
            "--conf spark.eventLog.enabled=true",
            "--conf spark.eventLog.dir=" + eventLog.toUri(),
            // Spark's metrics system to CSV files every second, through Beam's CSV sink: Spark's
            // own sinks see Beam's metrics as one gauge whose value is a map.
            "--conf spark.metrics.conf.driver.sink.csv.class="
                + "org.apache.beam.runners.spark.metrics.sink.CsvSink",
            "--conf spark.metrics.conf.driver.sink.csv.period=1",
            "--conf spark.metrics.conf.driver.sink.csv.unit=seconds",
            "--conf spark.metrics.conf.driver.sink.csv.directory=" + metrics(workDir),
            // One Spark application for all the pipelines of the run (the bootstraps, the stream):
            // each would otherwise start its own executors and fetch the jar again.
            "--driver-java-options -Dbeam.spark.test.reuseSparkContext=true",
            String.join(" ", moreSubmitArgs)));
    List<String> command = new ArrayList<>();
    command.add(
        Path.of(System.getProperty("lakecdc.root"), "templates/spark-submit.sh").toString());
    command.add(options.toString());
    command.addAll(List.of(args));
    ClusterProcess submission =
        ClusterProcess.start(name, command, env, workDir, workDir.resolve(name + ".log"));
    submissions.add(submission);
    return submission;
  }

  /**
   * spark-submit's {@code --jars} option with the S3 jars of a job on {@code s3a://} tables, as
   * docs/runners.md tells a user on a standalone cluster: every jar of cluster-tests/spark-home's
   * {@code target/s3-jars} (hadoop-aws 3.3.4 and its AWS SDK v1 bundle, the AWS SDK v2's s3 and
   * apache5-client with their dependencies), comma-separated, in name order. Spark adds them to the
   * driver's class path and serves them to each executor, which adds them to its own.
   */
  static List<String> s3Jars() throws IOException {
    List<String> jars;
    try (Stream<Path> files = Files.list(Path.of(System.getProperty("lakecdc.sparkS3Jars")))) {
      jars =
          files
              .filter(f -> f.getFileName().toString().endsWith(".jar"))
              .map(Path::toString)
              .sorted()
              .toList();
    }
    if (jars.isEmpty()) {
      throw new IOException(
          "no S3 jars in " + System.getProperty("lakecdc.sparkS3Jars") + ": build spark-home");
    }
    return List.of("--jars", String.join(",", jars));
  }

  /** Where the driver's CSV metrics sink of a submission from {@code workDir} writes. */
  static Path metrics(Path workDir) {
    return workDir.resolve("metrics");
  }

  @Override
  public void close() {
    submissions.forEach(ClusterProcess::close);
    workers.forEach(ClusterProcess::close);
    if (master != null) {
      master.close();
    }
  }
}
