package org.lakecdc.pipelines.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;

/** The start-up work on a background thread: a daemon that ends, beside the option check. */
class StartupWarmUpTest {
  @Test
  void aDaemonThreadDoesItsStepsBesideTheOptionCheckAndEnds() throws Exception {
    Thread thread = StartupWarmUp.start();
    assertEquals("lakecdc-start-up", thread.getName());
    assertTrue(thread.isDaemon());
    // What the job's main thread does meanwhile: the same command line parses as without it.
    CdcToDeltaOptions options =
        CommandLine.parseOnly(
            new String[] {"--captureInstance=dbo_orders", "--targetParallelism=3"},
            CdcToDeltaOptions.class);
    assertEquals("dbo_orders", options.getCaptureInstance());
    assertEquals(3, options.as(DirectOptions.class).getTargetParallelism());
    thread.join();
    assertFalse(thread.isAlive());
    assertTrue(PipelineOptionsFactory.getRegisteredOptions().contains(DirectOptions.class));
  }
}
