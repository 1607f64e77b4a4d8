package org.lakecdc.pipelines;

import java.util.Arrays;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.bronze.CrashPoint;

/**
 * The main job of {@link CdcToDelta#main} with a fatal error injected on the worker, for the tests
 * that run it in a JVM of its own ({@link FatalErrorJvmTest}). Usage: {@code FatalJob <failure>
 * <crash point> <batch> <CdcToDelta options...>}, with a {@link CrashPoint.Failure} and a {@link
 * CrashPoint}. With the system property {@code lakecdc.test.hangShutdown=true} a shutdown hook that
 * never returns is added first, as a stuck hook of a library would be.
 */
public final class FatalJob {
  private FatalJob() {}

  /** Entry point; see the class comment. */
  public static void main(String[] args) {
    CrashPoint.Failure failure = CrashPoint.Failure.valueOf(args[0]);
    CrashPoint point = CrashPoint.valueOf(args[1]);
    long batch = Long.parseLong(args[2]);
    String[] job = Arrays.copyOfRange(args, 3, args.length);
    if (Boolean.getBoolean("lakecdc.test.hangShutdown")) {
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      new java.util.concurrent.CountDownLatch(1).await(); // never counted down
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  },
                  "stuck-hook"));
    }
    JobExit.main(
        () -> CdcToDelta.run(job, System.err, config -> config.withCrash(point, batch, failure)));
  }
}
