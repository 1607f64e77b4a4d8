package org.lakecdc.pipelines.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
  void aWaveOfChunksNeedsItsChunksAtOncePlusOneThread() {
    assertEquals(5, ChunkReadPool.threads(4, 10));
    assertEquals(3, ChunkReadPool.threads(4, 2), "only the chunks left to read");
    assertEquals(2, ChunkReadPool.threads(1, 10));
    assertEquals(0, ChunkReadPool.threads(4, 0));
    assertEquals(0, ChunkReadPool.threadsFor(List.of()));
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
