package org.lakecdc.pipelines.cli;

import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.resourcehints.ResourceHints;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Start-up work of a job done on a background thread while the main thread parses and checks the
 * command line, the way Spring Boot's {@code BackgroundPreinitializer} does it: each step
 * initialises JVM-wide state that the main thread needs a moment later and would otherwise build
 * itself, one step at a time. Nothing here depends on the command line and nothing here is kept per
 * run, so the job does exactly what it does without it:
 *
 * <ol>
 *   <li>Beam's options registry ({@link PipelineOptionsFactory}'s static initialisation: every
 *       options interface on the class path validated against the others), which the option check
 *       reaches after loading Jackson;
 *   <li>Hadoop's default configuration, the current user ({@link
 *       UserGroupInformation#getCurrentUser}, built from the default configuration whatever the
 *       job's {@code --hadoopConf}) and the file system classes of the class path, which the
 *       launcher's table checks reach; no file system instance is made, so none is cached with
 *       another configuration than the job's;
 *   <li>Beam's pipeline protocol descriptors (through {@link ResourceHints}), which building the
 *       pipeline and the DirectRunner's translation of it reach.
 * </ol>
 *
 * <p>The main thread waits on a class still being initialised here rather than initialising it
 * again (the JVM's class initialisation lock), so a step that is not done yet costs nothing more
 * than without this thread. A step that fails is logged at debug level and left to the main thread,
 * which meets the same failure where it always did; the thread is a daemon and never delays the
 * JVM's exit.
 */
public final class StartupWarmUp {
  /** The background thread's name. */
  static final String THREAD_NAME = "lakecdc-start-up";

  private StartupWarmUp() {}

  /**
   * Starts the background thread (daemon) and returns at once.
   *
   * @return the thread, started
   */
  public static Thread start() {
    Thread thread = new Thread(StartupWarmUp::run, THREAD_NAME);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /** The steps, in the order the main thread needs them. */
  static void run() {
    step("Beam's options registry", () -> PipelineOptionsFactory.getRegisteredOptions());
    step(
        "Hadoop's default configuration",
        () -> {
          Configuration conf = new Configuration();
          conf.get("fs.defaultFS");
          UserGroupInformation.getCurrentUser();
          FileSystem.getFileSystemClass("file", conf);
        });
    step("Beam's pipeline protocol", () -> ResourceHints.create());
  }

  private interface Step {
    void run() throws Exception;
  }

  private static void step(String what, Step step) {
    try {
      step.run();
    } catch (Exception | LinkageError e) {
      // The logger only here: getting it at start-up would configure logging on the main thread.
      Logger log = LoggerFactory.getLogger(StartupWarmUp.class);
      log.debug("Start-up warm-up of {} failed; the job does it itself: {}", what, e.toString());
    }
  }
}
