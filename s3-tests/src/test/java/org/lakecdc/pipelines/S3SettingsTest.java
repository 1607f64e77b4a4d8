package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.locals3.LocalS3Server;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Bad S3 settings and faults of the store, on the main job's command line: a wrong endpoint, bad
 * credentials, a missing bucket, a store that refuses or ignores conditional writes (a stand-in
 * HTTP server answering as such a store does) each end the run before anything is written with one
 * line naming the setting and what to do, exit code 2; a store stopped for a moment during a run
 * makes the run retry or fail in one line, and the rerun writes every change once.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class S3SettingsTest {
  @TempDir static Path s3dir;
  @TempDir Path dir;

  private static LocalS3Server server;

  @BeforeAll
  static void startServer() throws IOException {
    server = LocalS3Server.start(s3dir);
    server.createBucket("settings");
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private record Run(int code, String out, String err) {}

  private Run run(List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      try {
        code = CdcToDelta.run(args.toArray(String[]::new), e, UnaryOperator.identity());
      } finally {
        System.setOut(console);
      }
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** The main job on {@code root}'s tables with these S3A settings over the server's. */
  private List<String> args(JobFixture f, String... settings) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + f.dir.resolve("source"),
                "--captureInstance=" + JobFixture.CI,
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--logFile=" + dir.resolve("run.log"),
                server.hadoopConfOption()));
    for (String setting : settings) {
      args.add("--hadoopConf=" + setting);
    }
    return args;
  }

  private int fixtures;

  /** A new source (in a directory of its own) with its tables under {@code root}. */
  private JobFixture fixture(String root) {
    return JobFixture.history(
        dir.resolve("source-" + (++fixtures)), root, DeltaTables.create(server.hadoopConf()));
  }

  /** Every file in the server's buckets. */
  private static List<String> storedFiles() throws IOException {
    try (Stream<Path> files = Files.walk(server.directory())) {
      return files
          .filter(Files::isRegularFile)
          .map(p -> server.directory().relativize(p).toString())
          .sorted()
          .collect(Collectors.toList());
    }
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  @Test
  void aWrongEndpointBadCredentialsAndAMissingBucketAreRefusedNamingTheSetting()
      throws IOException {
    List<String> before = storedFiles();
    JobFixture f = fixture("s3a://settings/settings");

    int port = closedPort();
    Run endpoint = run(args(f, "fs.s3a.endpoint=http://127.0.0.1:" + port));
    assertEquals(JobExit.BAD_OPTION, endpoint.code(), endpoint.err());
    List<String> lines = endpoint.err().lines().toList();
    assertEquals(1, lines.size(), endpoint.err());
    assertTrue(
        lines
            .get(0)
            .startsWith(
                "error: the S3 endpoint http://127.0.0.1:"
                    + port
                    + " (fs.s3a.endpoint) cannot be reached for bucket settings ("),
        lines.get(0));
    assertTrue(
        lines
            .get(0)
            .endsWith(
                "): set fs.s3a.endpoint to the store's address (http://host:port for MinIO or"
                    + " another server; unset for AWS S3, with fs.s3a.endpoint.region)"),
        lines.get(0));

    Run credentials = run(args(f, "fs.s3a.secret.key=not-the-secret"));
    assertEquals(JobExit.BAD_OPTION, credentials.code(), credentials.err());
    assertEquals(
        List.of(
            "error: S3 at "
                + server.endpoint()
                + " refused the credentials for bucket settings (403): check fs.s3a.access.key and"
                + " fs.s3a.secret.key (or fs.s3a.aws.credentials.provider), and that they may"
                + " read and write the bucket"),
        credentials.err().lines().toList());

    JobFixture elsewhere = fixture("s3a://no-such-bucket/settings");
    Run bucket = run(args(elsewhere));
    assertEquals(JobExit.BAD_OPTION, bucket.code(), bucket.err());
    assertEquals(
        List.of(
            "error: bucket no-such-bucket does not exist at "
                + server.endpoint()
                + ": create it, or correct the bucket of the s3a:// table paths"),
        bucket.err().lines().toList());

    assertEquals(before, storedFiles(), "nothing was written");
  }

  /** What a job printed to standard output and standard error, and its exit code. */
  private interface Job {
    int run(PrintStream out, PrintStream err);
  }

  private static Run capture(Job job) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = job.run(o, e);
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Every file and directory under the test's directory, but the sources the fixtures built. */
  private List<String> localFiles() throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .map(p -> dir.relativize(p).toString())
          .filter(p -> !p.startsWith("source-"))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  @Test
  void everyJobRefusesAMissingBucketBeforeItOpensATable() throws IOException {
    JobFixture f = fixture("s3a://no-such-bucket/jobs");
    String source = "--fakePath=" + f.dir.resolve("source");
    String conf = server.hadoopConfOption();
    String log = "--logFile=" + dir.resolve("logs/run.log");
    String missing =
        "error: bucket no-such-bucket does not exist at "
            + server.endpoint()
            + ": create it, or correct the bucket of the s3a:// table paths\n";
    List<String> before = storedFiles();
    List<String> local = localFiles();
    String silver = "--silver=s3a://no-such-bucket/jobs/silver";
    String bronze = "--bronze=" + f.bronze;
    Map<String, Job> jobs = new java.util.LinkedHashMap<>();
    jobs.put(
        "ApplyChanges",
        (out, err) ->
            ApplyChanges.run(
                new String[] {
                  source, conf, log, bronze, silver, "--facts=" + f.facts, "--control=" + f.control
                },
                out,
                err));
    jobs.put(
        "Backfill",
        (out, err) ->
            Backfill.run(
                args(f).toArray(String[]::new),
                out,
                err,
                java.time.Clock.systemUTC(),
                UnaryOperator.identity()));
    jobs.put(
        "Reconcile",
        (out, err) ->
            Reconcile.run(
                new String[] {
                  source,
                  conf,
                  log,
                  silver,
                  "--report=s3a://no-such-bucket/jobs/reconcile",
                  "--factsTable=" + f.facts
                },
                out,
                err));
    jobs.put(
        "Status",
        (out, err) ->
            Status.run(
                new String[] {
                  source, conf, log, "--factsTable=" + f.facts, "--controlTable=" + f.control
                },
                out,
                err,
                java.time.Clock.systemUTC(),
                f.dir.resolve("source")));
    jobs.put(
        "Show", (out, err) -> Show.run(new String[] {conf, log, "--table=" + f.bronze}, out, err));
    for (Map.Entry<String, Job> job : jobs.entrySet()) {
      Run run = capture(job.getValue());
      assertEquals(JobExit.BAD_OPTION, run.code(), job.getKey() + ": " + run.err());
      assertEquals(missing, run.err(), job.getKey());
      assertEquals("", run.out(), job.getKey());
    }
    assertEquals(before, storedFiles(), "nothing was written to the store");
    assertEquals(local, localFiles(), "nothing was written on the local disk");
  }

  /**
   * A stand-in S3 endpoint: HEAD of a bucket answers 200; a PUT with If-None-Match is answered
   * {@code conditional} (501 for a store that refuses, 200 for one that ignores it), and is
   * counted.
   */
  private static HttpServer store(int conditional, AtomicInteger puts) throws IOException {
    HttpServer http =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    http.createContext(
        "/",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          int status = 200;
          byte[] body = new byte[0];
          String method = exchange.getRequestMethod();
          if (method.equals("PUT") && exchange.getRequestHeaders().containsKey("If-None-Match")) {
            puts.incrementAndGet();
            status = conditional;
            if (status == 501) {
              body =
                  ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NotImplemented</Code>"
                          + "<Message>Conditional writes are not supported by this"
                          + " backend.</Message></Error>")
                      .getBytes(StandardCharsets.UTF_8);
              exchange.getResponseHeaders().add("Content-Type", "application/xml");
            }
          } else if (method.equals("DELETE")) {
            status = 204;
          }
          exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
          if (body.length > 0) {
            exchange.getResponseBody().write(body);
          }
          exchange.close();
        });
    http.start();
    return http;
  }

  @Test
  void aStoreThatRefusesOrIgnoresConditionalWritesIsRefusedBeforeAnythingIsWritten()
      throws IOException {
    JobFixture f = fixture("s3a://settings/unsafe");
    String advice =
        "), so commits of two writers to one Delta table could overwrite each other: use a store"
            + " that supports If-None-Match: * on PUT (AWS S3, recent MinIO), or, if only one"
            + " process at a time ever writes these tables, set"
            + " --hadoopConf=io.delta.kernel.logStore.s3a.impl=io.delta.storage.S3SingleDriverLogStore";

    AtomicInteger refusedPuts = new AtomicInteger();
    HttpServer refusing = store(501, refusedPuts);
    try {
      String endpoint = "http://127.0.0.1:" + refusing.getAddress().getPort();
      Run refused = run(args(f, "fs.s3a.endpoint=" + endpoint));
      assertEquals(JobExit.BAD_OPTION, refused.code(), refused.err());
      assertEquals(
          List.of(
              "error: the S3 store at "
                  + endpoint
                  + " (bucket settings) does not support conditional writes (a conditional PUT"
                  + " (If-None-Match: *) was refused: 501 NotImplemented"
                  + advice),
          refused.err().lines().toList());
      assertEquals(1, refusedPuts.get());
    } finally {
      refusing.stop(0);
    }

    AtomicInteger ignoredPuts = new AtomicInteger();
    HttpServer ignoring = store(200, ignoredPuts);
    try {
      String endpoint = "http://127.0.0.1:" + ignoring.getAddress().getPort();
      Run ignored = run(args(f, "fs.s3a.endpoint=" + endpoint));
      assertEquals(JobExit.BAD_OPTION, ignored.code(), ignored.err());
      assertEquals(
          List.of(
              "error: the S3 store at "
                  + endpoint
                  + " (bucket settings) does not support conditional writes (a conditional PUT"
                  + " (If-None-Match: *) of an existing key succeeded: the store ignores the"
                  + " condition"
                  + advice),
          ignored.err().lines().toList());
      assertEquals(2, ignoredPuts.get());
    } finally {
      ignoring.stop(0);
    }
  }

  /** The facts table's batch rows so far (none before it exists). */
  private static int batches(JobFixture f) {
    try {
      return f.factBatches().size();
    } catch (IllegalStateException e) {
      return 0;
    }
  }

  @Test
  void aStoreStoppedForAMomentDuringARunIsRetriedOrFailsInOneLineAndTheRerunIsExactlyOnce()
      throws Exception {
    JobFixture f = fixture("s3a://settings/outage");
    List<String> args = args(f);
    args.add("--maxCommitsPerBatch=1");
    AtomicReference<Run> outcome = new AtomicReference<>();
    Thread job = new Thread(() -> outcome.set(run(args)));
    job.start();
    // The store goes away once the job has committed its second batch, for a moment.
    long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
    while (batches(f) < 2 && job.isAlive()) {
      assertTrue(System.nanoTime() < until, "no second batch");
      job.join(100);
    }
    server.stop();
    // A moment: until the job ends, at most 5 s.
    job.join(5_000);
    server.restart();
    job.join(TimeUnit.MINUTES.toMillis(4));
    Run first = outcome.get();
    assertTrue(first.code() == JobExit.OK || first.code() == JobExit.FAILED, first.err());
    if (first.code() == JobExit.FAILED) {
      assertEquals(1, first.err().lines().count(), first.err());
      assertTrue(first.err().startsWith("error: "), first.err());
    }
    args.removeIf(a -> a.startsWith("--logFile"));
    args.add("--logFile=" + dir.resolve("rerun.log"));
    Run rerun = run(args);
    assertEquals(JobExit.OK, rerun.code(), rerun.err());
    List<String> bronze = new ArrayList<>();
    for (String row : f.bronzeChanges()) {
      bronze.add(row.substring(0, row.lastIndexOf('/')));
    }
    bronze.sort(null);
    assertEquals(f.sourceChanges(), bronze);
    List<String> batches = f.factBatches();
    for (int b = 0; b < batches.size(); b++) {
      assertTrue(batches.get(b).startsWith(b + ":"), batches.toString());
    }
  }
}
