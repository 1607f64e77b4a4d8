package org.lakecdc.locals3;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real S3 server on loopback: S3Proxy 4.0.0 with its {@code filesystem-nio2} backend, started in
 * a JVM of its own on a free port of 127.0.0.1. Each bucket is a directory under {@link
 * #directory()} and each object a file in it (keys with {@code /} are subdirectories), so a test or
 * a person can look at what was written. It speaks S3 over HTTP with AWS signatures (v2 and v4) for
 * one access key ({@link #ACCESS_KEY}, {@link #SECRET_KEY}); path-style requests only.
 *
 * <p>Conditional writes: a PUT with {@code If-None-Match: *} is published by {@code link(2)}, which
 * fails when the key exists, so it is answered 412 on an existing key and exactly one of racing
 * writers of a new key gets 200 (S3's semantics, checked by {@code LocalS3ServerTest}). With {@link
 * #PROVIDER_WITHOUT_CONDITIONAL_WRITES} instead, conditional PUTs are refused with 501, as on a
 * store that does not offer them.
 *
 * <p>A server started with {@link #startRecordingRequests} also records each request it handles
 * (method, bucket, key, whether it carried {@code If-None-Match}, the error status it answered), so
 * a test can tell that commits came through conditional PUTs ({@link #requests()}).
 *
 * <p>Lifecycle: {@link #start} waits until the server answers HTTP (at most {@link
 * #STARTUP_TIMEOUT}); {@link #stop} ends its process (connections are then refused on the port),
 * {@link #restart} starts it again on the same port and directory, {@link #close} stops it for
 * good. The process is also ended when this JVM exits. The server's own log lines go to {@link
 * #logFile()}. Not thread-safe: one test or launcher drives it.
 */
public final class LocalS3Server implements AutoCloseable {
  /** The access key the server accepts ({@code fs.s3a.access.key}). */
  public static final String ACCESS_KEY = "lakecdc-local";

  /** The secret key of {@link #ACCESS_KEY} ({@code fs.s3a.secret.key}). */
  public static final String SECRET_KEY = "lakecdc-local-secret";

  /** The S3Proxy backend: objects as files, conditional writes atomic. */
  private static final String PROVIDER = "filesystem-nio2";

  /** How long {@link #start} and {@link #restart} wait for the server to answer. */
  public static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);

  private static final String CLASSPATH_RESOURCE = "s3proxy.classpath";

  private final Path directory;
  private final String provider;
  private final Path workDirectory;
  private final Path logFile;

  /** Where the server records the requests it handled ({@link #requests()}), or null. */
  private final Path requestLog;

  private int port;
  private Process process;
  private final Thread shutdownHook;

  private LocalS3Server(Path directory, String provider, boolean recordRequests)
      throws IOException {
    this.directory = directory.toAbsolutePath().normalize();
    this.provider = provider;
    Files.createDirectories(this.directory);
    this.workDirectory = Files.createTempDirectory("lakecdc-local-s3");
    this.logFile = workDirectory.resolve("s3proxy.log");
    this.requestLog = recordRequests ? workDirectory.resolve("requests.log") : null;
    this.shutdownHook = new Thread(this::destroyProcess, "local-s3-server-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /**
   * Starts a server whose buckets are the subdirectories of {@code directory} (created when
   * missing; existing buckets and objects are served as they are).
   *
   * @param directory where the buckets are
   * @return the running server
   * @throws IOException when the server does not answer within {@link #STARTUP_TIMEOUT} (the
   *     message holds the end of its log) or its files cannot be written
   */
  public static LocalS3Server start(Path directory) throws IOException {
    return start(directory, false);
  }

  /**
   * Starts a server as {@link #start(Path)} does that also records every request it handles: its
   * method, bucket and key, whether it carried {@code If-None-Match}, and the error status it was
   * answered with ({@link #requests()}). The record is S3Proxy's own: its request handler's debug
   * line of each request and trace lines of its headers, written by its logging to a file of this
   * server (some ten lines a request, so for tests, not for the demo).
   *
   * @param directory where the buckets are
   * @return the running server
   * @throws IOException see {@link #start(Path)}
   */
  public static LocalS3Server startRecordingRequests(Path directory) throws IOException {
    return start(directory, true);
  }

  private static LocalS3Server start(Path directory, boolean recordRequests) throws IOException {
    LocalS3Server server = new LocalS3Server(directory, PROVIDER, recordRequests);
    IOException last = null;
    // A free port found now can be taken by another process before the server binds it.
    for (int attempt = 0; attempt < 3; attempt++) {
      server.port = freePort();
      try {
        server.launch();
        return server;
      } catch (IOException e) {
        last = e;
        server.destroyProcess();
      }
    }
    server.close();
    throw last;
  }

  /** The endpoint, {@code http://127.0.0.1:<port>} ({@code fs.s3a.endpoint}). */
  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  /** The TCP port on 127.0.0.1. */
  public int port() {
    return port;
  }

  /** The directory whose subdirectories are the buckets. */
  public Path directory() {
    return directory;
  }

  /** The directory of a bucket's objects (whether or not the bucket exists). */
  public Path bucketDirectory(String bucket) {
    return directory.resolve(bucket);
  }

  /** The server's log (its standard output and error). */
  public Path logFile() {
    return logFile;
  }

  /**
   * Creates a bucket (a directory under {@link #directory()}); an existing one is kept.
   *
   * @param bucket the bucket name (lower case letters, digits, {@code -} and {@code .})
   * @return the bucket's directory
   * @throws IllegalArgumentException when the name is not a valid bucket name
   * @throws UncheckedIOException when the directory cannot be created
   */
  public Path createBucket(String bucket) {
    if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
      throw new IllegalArgumentException("Not an S3 bucket name: '" + bucket + "'");
    }
    try {
      return Files.createDirectories(bucketDirectory(bucket));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create bucket directory " + bucket, e);
    }
  }

  /**
   * The Hadoop S3A settings that reach this server: endpoint, path-style access, no TLS, the access
   * and secret key, and a region for the signatures; a job takes them as {@code --hadoopConf}
   * entries. Hadoop keeps one S3A file system per bucket and JVM, made with the settings of its
   * first use: servers started one after the other in a JVM need buckets of their own names.
   *
   * @return key to value, in a stable order
   */
  public Map<String, String> hadoopConf() {
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("fs.s3a.endpoint", endpoint());
    conf.put("fs.s3a.endpoint.region", "us-east-1");
    conf.put("fs.s3a.path.style.access", "true");
    conf.put("fs.s3a.connection.ssl.enabled", "false");
    conf.put("fs.s3a.access.key", ACCESS_KEY);
    conf.put("fs.s3a.secret.key", SECRET_KEY);
    // S3A 3.3.4 deletes the parent "directory" markers after each file it writes by default
    // (requests per data file); the later releases' default keeps them.
    conf.put("fs.s3a.directory.marker.retention", "keep");
    // A stopped server is noticed in seconds, not after S3A's default minutes of retries.
    conf.put("fs.s3a.attempts.maximum", "3");
    conf.put("fs.s3a.retry.limit", "3");
    conf.put("fs.s3a.retry.interval", "100ms");
    conf.put("fs.s3a.connection.establish.timeout", "5000");
    conf.put("fs.s3a.connection.timeout", "30000");
    return conf;
  }

  /**
   * {@link #hadoopConf()} as one {@code --hadoopConf=k=v,k=v,...} option.
   *
   * @return the option
   */
  public String hadoopConfOption() {
    List<String> entries = new ArrayList<>();
    hadoopConf().forEach((k, v) -> entries.add(k + "=" + v));
    return "--hadoopConf=" + String.join(",", entries);
  }

  /**
   * Ends the server's process and waits for it; the port then refuses connections until {@link
   * #restart}. Nothing stored is lost.
   */
  public void stop() {
    destroyProcess();
  }

  /**
   * Starts the server again after {@link #stop}, on the same port and directory.
   *
   * @throws IOException see {@link #start(Path)}
   */
  public void restart() throws IOException {
    destroyProcess();
    launch();
  }

  /** Whether the server's process is running. */
  public boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** Stops the server; its buckets stay in {@link #directory()}. */
  @Override
  public void close() {
    destroyProcess();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // The JVM is already exiting: the hook stops the process.
    }
  }

  private void launch() throws IOException {
    Path properties = workDirectory.resolve("s3proxy.properties");
    writeLines(
        properties,
        "s3proxy.endpoint=http://127.0.0.1:" + port,
        "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=" + ACCESS_KEY,
        "s3proxy.credential=" + SECRET_KEY,
        "jclouds.provider=" + provider,
        "jclouds.filesystem.basedir=" + directory);
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (requestLog != null) {
      command.add("-Dlogback.configurationFile=" + writeRequestLogConfiguration());
    }
    command.addAll(
        List.of(
            "-Xmx512m",
            "-XX:+UseSerialGC",
            "-cp",
            s3proxyClassPath(),
            "org.gaul.s3proxy.Main",
            "--properties",
            properties.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    // S3Proxy's logback configuration reads the level from the environment.
    builder.environment().put("LOG_LEVEL", "warn");
    builder.environment().put("JETTY_LOG_LEVEL", "warn");
    process = builder.start();
    awaitAnswer();
  }

  /**
   * One request the server handled, as {@link #startRecordingRequests} records it.
   *
   * @param method the HTTP method ({@code PUT}, {@code GET}, ...)
   * @param bucket the bucket (the path's first segment; empty for a request on the service)
   * @param key the object key (the rest of the path, still URL-encoded; empty for one on a bucket)
   * @param ifNoneMatch whether the request carried an {@code If-None-Match} header
   * @param status the error status the server answered with ({@code 412} for a conditional PUT of
   *     an existing key), or 200 for a request it answered without an error
   */
  public record Request(
      String method, String bucket, String key, boolean ifNoneMatch, int status) {}

  /**
   * S3Proxy's debug line of a request: {@code request: ...{PUT@1f2e http://host:port/path
   * HTTP/1.1}...}.
   */
  private static final Pattern REQUEST_LINE =
      Pattern.compile("^(\\S+) request: .*\\{([A-Z]+)@\\p{XDigit}+ (\\S+) HTTP/");

  private static final Pattern HEADER_LINE = Pattern.compile("^(\\S+) header: ([^:]+): ");

  private static final Pattern ERROR_LINE =
      Pattern.compile("^(\\S+) sendSimpleErrorResponse: (\\d{3}) ");

  /**
   * The requests the server has handled so far, in the order it began them (each thread of the
   * server handles one request at a time, and its lines are read in that order). A request still
   * being handled can lack its error status.
   *
   * @return the requests
   * @throws IllegalStateException when the server was started without {@link
   *     #startRecordingRequests}
   * @throws UncheckedIOException when the record cannot be read
   */
  public List<Request> requests() {
    if (requestLog == null) {
      throw new IllegalStateException("The server was not started with startRecordingRequests");
    }
    String text;
    try {
      text = Files.exists(requestLog) ? Files.readString(requestLog, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the local S3 server's request log", e);
    }
    // Only whole lines: the server may be writing the last one.
    text = text.substring(0, text.lastIndexOf('\n') + 1);
    List<Request> out = new ArrayList<>();
    Map<String, Integer> currentByThread = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher request = REQUEST_LINE.matcher(line);
      if (request.find()) {
        String path = URI.create(request.group(3)).getRawPath();
        String rest = path.startsWith("/") ? path.substring(1) : path;
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String key = slash < 0 ? "" : rest.substring(slash + 1);
        currentByThread.put(request.group(1), out.size());
        out.add(new Request(request.group(2), bucket, key, false, 200));
        continue;
      }
      Matcher header = HEADER_LINE.matcher(line);
      if (header.find() && header.group(2).equalsIgnoreCase("If-None-Match")) {
        Integer at = currentByThread.get(header.group(1));
        if (at != null) {
          Request r = out.get(at);
          out.set(at, new Request(r.method(), r.bucket(), r.key(), true, r.status()));
        }
        continue;
      }
      Matcher error = ERROR_LINE.matcher(line);
      if (error.find()) {
        Integer at = currentByThread.get(error.group(1));
        if (at != null) {
          Request r = out.get(at);
          out.set(
              at,
              new Request(
                  r.method(),
                  r.bucket(),
                  r.key(),
                  r.ifNoneMatch(),
                  Integer.parseInt(error.group(2))));
        }
      }
    }
    return out;
  }

  /**
   * S3Proxy's logging configuration for {@link #startRecordingRequests}: its request handler's
   * debug and trace lines (a request, its headers, an error answered) to {@link #requestLog}, each
   * with the thread that handled it; everything else as the default configuration with {@code
   * LOG_LEVEL=warn}, to the standard output.
   */
  private Path writeRequestLogConfiguration() throws IOException {
    Path configuration = workDirectory.resolve("logback-requests.xml");
    writeLines(
        configuration,
        "<configuration>",
        "  <appender name=\"STDOUT\" class=\"ch.qos.logback.core.ConsoleAppender\">",
        "    <encoder><pattern>[s3proxy] %.-1p %d{MM-dd HH:mm:ss.SSS} %t %c{30}: %m%n</pattern></encoder>",
        "  </appender>",
        "  <appender name=\"REQUESTS\" class=\"ch.qos.logback.core.FileAppender\">",
        "    <file>" + requestLog + "</file>",
        "    <encoder><pattern>%t %m%n</pattern></encoder>",
        "  </appender>",
        "  <logger name=\"org.gaul.s3proxy.S3ProxyHandler\" level=\"trace\""
            + " additivity=\"false\">",
        "    <appender-ref ref=\"REQUESTS\"/>",
        "  </logger>",
        "  <root level=\"warn\"><appender-ref ref=\"STDOUT\"/></root>",
        "</configuration>");
    return configuration;
  }

  /** Writes {@code lines} to {@code file} in UTF-8, each ended with a line feed. */
  private static void writeLines(Path file, String... lines) throws IOException {
    Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
  }

  /** Waits until the port accepts a connection and answers an HTTP request. */
  private void awaitAnswer() throws IOException {
    long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(
            "The local S3 server exited with code "
                + process.exitValue()
                + " while starting on port "
                + port
                + ": "
                + logTail());
      }
      if (answers()) {
        return;
      }
      try {
        process.waitFor(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("Interrupted while the local S3 server was starting", e);
      }
    }
    throw new IOException(
        "The local S3 server did not answer on port "
            + port
            + " within "
            + STARTUP_TIMEOUT.toSeconds()
            + " s: "
            + logTail());
  }

  private boolean answers() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      socket.setSoTimeout(5000);
      socket
          .getOutputStream()
          .write(
              ("HEAD / HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      byte[] head = in.readNBytes(5);
      return new String(head, StandardCharsets.US_ASCII).equals("HTTP/");
    } catch (IOException e) {
      return false;
    }
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  private void destroyProcess() {
    Process p = process;
    if (p == null || !p.isAlive()) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** The S3Proxy jar, as written at build time into this module's resource. */
  static String s3proxyClassPath() throws IOException {
    try (InputStream in = LocalS3Server.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
      if (in == null) {
        throw new IOException(
            "No "
                + CLASSPATH_RESOURCE
                + " beside "
                + LocalS3Server.class.getName()
                + ": build the local-s3 module with Maven (it writes the S3Proxy jar's path)");
      }
      String classPath = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
      if (classPath.isEmpty()) {
        throw new IOException("The S3Proxy class path resource is empty: rebuild local-s3");
      }
      return classPath;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
