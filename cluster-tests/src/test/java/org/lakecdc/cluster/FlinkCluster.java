package org.lakecdc.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Flink 1.19 session cluster on loopback: a JobManager and TaskManagers, each its own JVM started
 * as a distribution's {@code bin/jobmanager.sh} and {@code bin/taskmanager.sh} start them (Flink's
 * {@code BashJavaUtils} turns {@code conf/config.yaml}'s memory settings into the JVM's options,
 * then the entry point class runs on {@code lib/*}). The home is laid out from Maven Central:
 * {@code lib/} is cluster-tests/flink-home's copy of Flink's jars with Log4j 2 and the Prometheus
 * reporter, {@code bin/flink} runs Flink's {@code CliFrontend} (a test resource: Maven Central
 * serves no distribution), and {@code conf/} is written here.
 */
final class FlinkCluster implements AutoCloseable {
  /**
   * What Flink's default configuration puts in {@code env.java.opts.all} on Java 17 (the modules
   * Flink and Kryo reach into), and the JIT: C1 only, for the JobManager, the TaskManagers and the
   * clients alike. Each lives for a run of a few minutes on two cores shared by all of them, where
   * C2's compile threads cost more CPU than its faster code gains back.
   */
  static final String JAVA_OPTS =
      String.join(
          " ",
          "-XX:TieredStopAtLevel=1",
          "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
          "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
          "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.net=ALL-UNNAMED",
          "--add-opens=java.base/java.io=ALL-UNNAMED",
          "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-opens=java.base/java.text=ALL-UNNAMED",
          "--add-opens=java.base/java.time=ALL-UNNAMED",
          "--add-opens=java.base/java.util=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

  /** Task slots per TaskManager: one TaskManager alone still holds a job of parallelism 2. */
  static final int SLOTS = 2;

  final Path home;
  private final Path dir;
  final int restPort = ClusterProcess.freePort();
  private final int rpcPort = ClusterProcess.freePort();
  private ClusterProcess jobManager;
  private final List<ClusterProcess> taskManagers = new ArrayList<>();
  private final Map<ClusterProcess, Integer> prometheusPorts = new HashMap<>();
  private final List<ClusterProcess> clients = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  /** Lays out the Flink home in {@code dir/flink-home}. */
  FlinkCluster(Path dir) throws IOException {
    this.dir = dir;
    this.home = dir.resolve("flink-home");
    Files.createDirectories(home.resolve("bin"));
    Files.createDirectories(home.resolve("conf"));
    Files.createDirectories(home.resolve("log"));
    Files.createSymbolicLink(
        home.resolve("lib"), Path.of(System.getProperty("lakecdc.flinkHomeLib")));
    copy("bin/flink", true);
    copy("conf/log4j.properties", false);
    copy("conf/log4j-cli.properties", false);
    Files.write(
        home.resolve("conf/config.yaml"),
        List.of(
            "jobmanager.rpc.address: 127.0.0.1",
            "jobmanager.rpc.port: " + rpcPort,
            "jobmanager.bind-host: 127.0.0.1",
            "rest.address: 127.0.0.1",
            "rest.bind-address: 127.0.0.1",
            "rest.port: " + restPort,
            "taskmanager.host: 127.0.0.1",
            "taskmanager.bind-host: 127.0.0.1",
            "taskmanager.numberOfTaskSlots: " + SLOTS,
            "parallelism.default: 2",
            // Each job's two subtasks on two TaskManagers while both are there.
            "cluster.evenly-spread-out-slots: true",
            "jobmanager.memory.process.size: 1280m",
            "taskmanager.memory.process.size: 1600m",
            // Each job of a run (the bootstrap snapshots, then the stream) loads the job jar's
            // classes in a class loader of its own: with the default 256m of metaspace the
            // TaskManagers ran out of it (OutOfMemoryError: Metaspace) by the stream's job.
            "jobmanager.memory.jvm-metaspace.size: 512m",
            "taskmanager.memory.jvm-metaspace.size: 640m",
            // A lost TaskManager: the job restarts on what is left.
            "restart-strategy.type: fixed-delay",
            "restart-strategy.fixed-delay.attempts: 20",
            "restart-strategy.fixed-delay.delay: 2 s",
            // A TaskManager killed with SIGKILL is marked lost after two failed heartbeat RPCs
            // (heartbeat.rpc-failure-threshold): every 2 s instead of Flink's 10 s, so the job
            // restarts on what is left within seconds. A live but slow TaskManager still has
            // heartbeat.timeout's 50 s.
            "heartbeat.interval: 2000",
            "metrics.reporter.prom.factory.class:"
                + " org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
            "metrics.reporter.prom.host: 127.0.0.1"));
  }

  private void copy(String path, boolean executable) throws IOException {
    Path target = home.resolve(path);
    try (InputStream in = FlinkCluster.class.getResourceAsStream("/flink-home/" + path)) {
      Files.copy(in, target);
    }
    if (executable) {
      Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }

  /** The environment of every process: the home, its configuration, Java 17's options. */
  Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("FLINK_HOME", home.toString());
    env.put("FLINK_CONF_DIR", home.resolve("conf").toString());
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("FLINK_ENV_JAVA_OPTS", JAVA_OPTS);
    return env;
  }

  /**
   * What {@code BashJavaUtils} prints for {@code command} ({@code GET_JM_RESOURCE_PARAMS}, {@code
   * GET_TM_RESOURCE_PARAMS}): the JVM's options, then the dynamic configuration the entry point
   * gets, as {@code bin/config.sh} reads them.
   */
  private List<String> resourceParams(String command) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-classpath",
                home.resolve("lib") + "/*",
                "org.apache.flink.runtime.util.bash.BashJavaUtils",
                command,
                "--configDir",
                home.resolve("conf").toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    List<String> results =
        out.lines()
            .filter(l -> l.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:"))
            .map(l -> l.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length()).strip())
            .toList();
    if (results.size() != 2) {
      throw new IllegalStateException("BashJavaUtils " + command + " printed:\n" + out);
    }
    return results;
  }

  private ClusterProcess startDaemon(String name, String entryPoint, String params, String log)
      throws IOException, InterruptedException {
    List<String> resources = resourceParams(params);
    int prometheusPort = ClusterProcess.freePort();
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(Arrays.asList(resources.get(0).split("\\s+")));
    command.addAll(Arrays.asList(JAVA_OPTS.split(" ")));
    command.add("-Dlog.file=" + dir.resolve(log));
    command.add("-Dlog4j.configurationFile=file:" + home.resolve("conf/log4j.properties"));
    command.addAll(List.of("-classpath", home.resolve("lib") + "/*", entryPoint));
    command.addAll(List.of("--configDir", home.resolve("conf").toString()));
    command.addAll(Arrays.asList(resources.get(1).split("\\s+")));
    command.addAll(List.of("-D", "metrics.reporter.prom.port=" + prometheusPort));
    ClusterProcess process =
        ClusterProcess.start(name, command, env(), dir, dir.resolve(log + ".out"));
    prometheusPorts.put(process, prometheusPort);
    return process;
  }

  /** Starts the JobManager and {@code count} TaskManagers; returns once all are registered. */
  void start(int count) throws IOException, InterruptedException {
    jobManager =
        startDaemon(
            "Flink JobManager",
            "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
            "GET_JM_RESOURCE_PARAMS",
            "jobmanager.log");
    ClusterProcess.await(
        "the JobManager's REST endpoint",
        () -> rest("/overview") != null,
        Duration.ofMinutes(3),
        jobManager);
    for (int i = 0; i < count; i++) {
      startTaskManager();
    }
  }

  /** Starts one more TaskManager and waits until the JobManager counts it. */
  ClusterProcess startTaskManager() throws IOException, InterruptedException {
    int n = taskManagers.size() + 1;
    ClusterProcess tm =
        startDaemon(
            "Flink TaskManager " + n,
            "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
            "GET_TM_RESOURCE_PARAMS",
            "taskmanager-" + n + ".log");
    taskManagers.add(tm);
    long alive = taskManagers.stream().filter(t -> t.process.isAlive()).count();
    ClusterProcess.await(
        alive + " TaskManagers registered",
        () -> {
          JsonNode overview = rest("/overview");
          return overview != null && overview.get("taskmanagers").asLong() == alive;
        },
        Duration.ofMinutes(3),
        tm);
    return tm;
  }

  List<ClusterProcess> taskManagers() {
    return taskManagers;
  }

  /** The JSON at the JobManager's REST path, or null when it does not answer (yet). */
  JsonNode rest(String path) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + path))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? json.readTree(response.body()) : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** What {@code process}'s Prometheus reporter exposes now (the text format), or "" if nothing. */
  String scrape(ClusterProcess process) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + prometheusPorts.get(process) + "/metrics"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? response.body() : "";
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /** {@code templates/flink-run.sh} with this home as {@code FLINK_HOME}: {@code flink run}. */
  ClusterProcess run(String name, Path options, Path workDir, String... args) throws IOException {
    Map<String, String> env = env();
    env.put("LAKECDC_JAR", System.getProperty("lakecdc.flinkJar"));
    env.put("JVM_ARGS", "-Xmx768m");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("lakecdc.root"), "templates/flink-run.sh").toString());
    command.add(options.toString());
    command.addAll(List.of(args));
    ClusterProcess client =
        ClusterProcess.start(name, command, env, workDir, workDir.resolve(name + ".log"));
    clients.add(client);
    return client;
  }

  /** {@code bin/flink <args>} (e.g. {@code cancel <job id>}), waited for; returns its output. */
  ClusterProcess flink(String name, Path workDir, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/flink").toString());
    command.addAll(List.of(args));
    ClusterProcess client =
        ClusterProcess.start(name, command, env(), workDir, workDir.resolve(name + ".log"));
    clients.add(client);
    return client;
  }

  @Override
  public void close() {
    clients.forEach(ClusterProcess::close);
    taskManagers.forEach(ClusterProcess::close);
    if (jobManager != null) {
      jobManager.close();
    }
  }
}
