package org.lakecdc.pipelines.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.junit.jupiter.api.Test;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;

/** {@link ChunkReadPool}: the DirectRunner pool of a pipeline that reads chunks. */
class ChunkReadPoolTest {
  /** A runner that is not the DirectRunner. */
  static final class OtherRunner extends PipelineRunner<PipelineResult> {
    public static OtherRunner fromOptions(PipelineOptions options) {
      return new OtherRunner();
    }

    @Override
    public PipelineResult run(Pipeline pipeline) {
      throw new UnsupportedOperationException("never run");
    }
  }

  private static CdcToDeltaOptions parse(String... args) {
    return CommandLine.parseOnly(args, CdcToDeltaOptions.class);
  }

  @Test
  void aWaveOfChunksNeedsItsChunksAtOncePlusOneThreadPerOtherBranch() {
    assertEquals(4, ChunkReadPool.threads(4, 10, 0), "chunk reads alone: no thread to spare");
    assertEquals(5, ChunkReadPool.threads(4, 10, 1), "a stream beside them: one more");
    assertEquals(16, ChunkReadPool.threads(4, 5, 12), "12 small tables' snapshots beside them");
    assertEquals(
        4 + ChunkReadPool.MAX_OTHER_THREADS,
        ChunkReadPool.threads(4, 5, 500),
        "at most MAX_OTHER_THREADS for the other branches");
    assertEquals(3, ChunkReadPool.threads(4, 2, 1), "only the chunks left to read");
    assertEquals(2, ChunkReadPool.threads(1, 10, 1));
    assertEquals(0, ChunkReadPool.threads(4, 0, 3), "no chunk to read: the pool is left as is");
    assertEquals(0, ChunkReadPool.threadsFor(List.of(), 3));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ChunkReadPool.threads(4, 10, -1));
    assertEquals("others must be at least 0, got -1", e.getMessage());
  }

  @Test
  void theDirectRunnersPoolIsRaisedUnlessTheCommandLineGaveIt() {
    CdcToDeltaOptions options = parse("--targetParallelism=1");
    options.as(DirectOptions.class).setTargetParallelism(1);
    assertEquals(1, ChunkReadPool.fit(options, 5), "--targetParallelism given: kept");
    assertEquals(1, options.as(DirectOptions.class).getTargetParallelism());

    CdcToDeltaOptions sized = parse();
    sized.as(DirectOptions.class).setTargetParallelism(1);
    assertEquals(5, ChunkReadPool.fit(sized, 5));
    assertEquals(5, sized.as(DirectOptions.class).getTargetParallelism());
    assertEquals(5, ChunkReadPool.fit(sized, 3), "never lowered");
    assertEquals(5, ChunkReadPool.fit(sized, 0));

    CdcToDeltaOptions other = parse();
    other.as(DirectOptions.class).setTargetParallelism(1);
    other.setRunner(OtherRunner.class);
    assertEquals(1, ChunkReadPool.fit(other, 5), "other runners: unchanged");
    assertEquals(1, other.as(DirectOptions.class).getTargetParallelism());
  }
}
