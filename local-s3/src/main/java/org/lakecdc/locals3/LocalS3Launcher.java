package org.lakecdc.locals3;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What {@code mvn -Plocal-s3 exec:java} starts (pipelines/): a local S3 server ({@link
 * LocalS3Server}) whose buckets are the directories under {@value #DEFAULT_DIRECTORY} (the system
 * property {@code lakecdc.s3Dir} names another), with bucket {@value #BUCKET}, then a job's main
 * class (the system property {@code lakecdc.mainClass}, default the main job) with the given
 * arguments and one more, {@code --hadoopConf=} with the server's S3A settings (endpoint, keys,
 * path-style access). The job's {@code s3a://lake/...} paths are then files under {@code
 * <directory>/lake/...}; the launcher prints where before the job starts and again when the JVM
 * exits, and stops the server then.
 *
 * <p>A failure to start the server is one {@code error:} line and exit code 1; the job's own exit
 * code and lines are the job's.
 */
public final class LocalS3Launcher {
  /** Where the buckets are unless {@code lakecdc.s3Dir} says otherwise. */
  public static final String DEFAULT_DIRECTORY = "lakecdc-demo/s3";

  /** The bucket created for the job. */
  public static final String BUCKET = "lake";

  private LocalS3Launcher() {}

  /**
   * Starts the server and runs the job (see the class comment).
   *
   * @param args the job's arguments
   * @throws Exception what the job's main throws
   */
  public static void main(String[] args) throws Exception {
    Path directory = Path.of(System.getProperty("lakecdc.s3Dir", DEFAULT_DIRECTORY));
    LocalS3Server server;
    try {
      server = LocalS3Server.start(directory);
    } catch (IOException e) {
      System.err.println("error: the local S3 server did not start: " + e.getMessage());
      System.exit(1);
      return;
    }
    Path bucket = server.createBucket(BUCKET).toAbsolutePath();
    String where = "s3a://" + BUCKET + "/ is the directory " + bucket + " (one file per object)";
    System.out.println(
        "Local S3 server (S3Proxy) on " + server.endpoint() + ", bucket " + BUCKET + ": " + where);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.out.println("Local S3 server stopped; " + where);
                  server.stop();
                },
                "local-s3-launcher"));
    String mainClass =
        System.getProperty("lakecdc.mainClass", "org.lakecdc.pipelines.CdcToDelta").strip();
    Method main =
        Class.forName(mainClass, true, Thread.currentThread().getContextClassLoader())
            .getMethod("main", String[].class);
    List<String> withServer = new ArrayList<>(Arrays.asList(args));
    withServer.add(server.hadoopConfOption());
    try {
      main.invoke(null, (Object) withServer.toArray(String[]::new));
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw e;
    }
  }
}
