package org.lakecdc.io.mssqlcdc.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.SourceTestUtils;
import org.junit.jupiter.api.Test;

/** {@link ChunkSource}: one split per chunk, whatever size the runner asks for. */
class ChunkSourceTest {
  private static final List<Chunk> CHUNKS =
      List.of(
          new Chunk(0, null, List.of(2)),
          new Chunk(1, List.of(2), List.of(4)),
          new Chunk(2, List.of(4), null));
  private final PipelineOptions options = PipelineOptionsFactory.create();

  @Test
  void splitsIntoOneSourcePerChunkWhateverTheDesiredSize() throws Exception {
    ChunkSource source = new ChunkSource(CHUNKS);
    for (long desired : new long[] {1, 96, 1L << 40}) {
      List<? extends BoundedSource<Chunk>> splits = source.split(desired, options);
      assertEquals(
          List.of(List.of(CHUNKS.get(0)), List.of(CHUNKS.get(1)), List.of(CHUNKS.get(2))),
          splits.stream().map(s -> ((ChunkSource) s).chunks()).toList());
    }
    assertEquals(192, source.getEstimatedSizeBytes(options));
    assertEquals(CHUNKS, SourceTestUtils.readFromSource(source, options));
    SourceTestUtils.assertSourcesEqualReferenceSource(source, source.split(1, options), options);
    ChunkSource one = new ChunkSource(List.of(CHUNKS.get(1)));
    assertEquals(List.of(one), one.split(1, options));
    assertEquals(List.of(CHUNKS.get(1)), SourceTestUtils.readFromSource(one, options));
  }

  @Test
  void theSplitsAreListedLastFirstOnlyForTheFlinkRunnersBatchMode() {
    assertTrue(ChunkSource.handedOutLastFirst("FlinkRunner", false));
    assertTrue(ChunkSource.handedOutLastFirst("TestFlinkRunner", false));
    assertFalse(ChunkSource.handedOutLastFirst("FlinkRunner", true));
    assertFalse(ChunkSource.handedOutLastFirst("SparkRunner", false));
    assertFalse(ChunkSource.handedOutLastFirst("DirectRunner", false));
  }

  @Test
  void aSourceWithoutChunksIsRefused() {
    assertEquals(
        "A chunk source needs at least one chunk",
        assertThrows(IllegalArgumentException.class, () -> new ChunkSource(List.of()))
            .getMessage());
  }
}
