package org.lakecdc.pipelines;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * Pipeline options of the three runners the jobs run on, by runner name, as a user passes them on
 * the command line: the DirectRunner, the SparkRunner on {@code local[2]} and the FlinkRunner on
 * its embedded mini-cluster. The tests name runners, never their classes, so a build with one
 * runner profile ({@code -Pspark}, {@code -Pflink}) still compiles them and skips the other.
 */
final class Runners {
  static final String DIRECT = "DirectRunner";
  static final String SPARK = "SparkRunner";
  static final String FLINK = "FlinkRunner";

  private Runners() {}

  /** Whether {@code runner} is on this test class path. */
  static boolean available(String runner) {
    String className =
        switch (runner) {
          case DIRECT -> "org.apache.beam.runners.direct.DirectRunner";
          case SPARK -> "org.apache.beam.runners.spark.SparkRunner";
          case FLINK -> "org.apache.beam.runners.flink.FlinkRunner";
          default -> throw new IllegalArgumentException(runner);
        };
    try {
      Class.forName(className, false, Runners.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /** Why a test of {@code runner} is skipped in this build. */
  static String missing(String runner) {
    return runner
        + " is not on this build's test class path: the default build (mvn verify) has all three"
        + " runners; -Pspark or -Pflink builds only that runner";
  }

  /** Options selecting {@code runner}, plus {@code more} arguments. */
  static PipelineOptions options(String runner, String... more) {
    List<String> args = new ArrayList<>();
    args.add("--runner=" + runner);
    switch (runner) {
      case SPARK -> args.add("--sparkMaster=local[2]");
      case FLINK -> {
        args.add("--flinkMaster=[local]");
        args.add("--parallelism=2");
      }
      default -> {}
    }
    args.addAll(List.of(more));
    return PipelineOptionsFactory.fromArgs(args.toArray(String[]::new)).create();
  }
}
