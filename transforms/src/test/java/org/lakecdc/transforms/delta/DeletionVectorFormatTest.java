package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.transforms.silver.DeletionVectors;

/**
 * Silver's deletion vector writer ({@link DeletionVectors}) against Kernel's own reader: the exact
 * bytes of a small vector, and round trips through {@code RoaringBitmapArray} (inline) and {@code
 * DeletionVectorStoredBitmap} (a vector file with offsets, size and CRC checked), pinning the
 * {@link KernelInternals} deletion vector methods.
 */
class DeletionVectorFormatTest {
  @TempDir Path dir;

  private final Engine engine = DefaultEngine.create(new Configuration());

  @Test
  void smallVectorHasTheProtocolsBytes() {
    byte[] bytes = DeletionVectors.serialize(new long[] {5, 0, 3, 3});
    assertEquals(
        // magic 1681511377 LE, one bitmap (int64 LE), key 0 (int32 LE), then Roaring portable:
        // cookie 12346 (no run containers), 1 container, key 0 / cardinality-1 2, offset 16,
        // values 0, 3, 5 (uint16 LE).
        "d1d33964"
            + "0100000000000000"
            + "00000000"
            + "3a300000"
            + "01000000"
            + "00000200"
            + "10000000"
            + "000003000500",
        HexFormat.of().formatHex(bytes));
  }

  @Test
  void vectorFileFramesEachVectorWithBigEndianSizeAndCrc() {
    byte[] vector = DeletionVectors.serialize(new long[] {0, 3, 5});
    DeletionVectors.VectorFile file = DeletionVectors.file(List.of(vector, vector));
    String hex = HexFormat.of().formatHex(file.bytes());
    String data = HexFormat.of().formatHex(vector);
    // CRC-32 of the 38 data bytes: 0x91c28e9c.
    assertEquals("01" + "00000026" + data + "91c28e9c" + "00000026" + data + "91c28e9c", hex);
    assertEquals(
        List.of(new DeletionVectors.Placement(1, 38), new DeletionVectors.Placement(47, 38)),
        file.placements());
  }

  @Test
  void kernelReadsInlineVectorsIncludingPositionsAbove32Bits() throws IOException {
    long[] positions = {0, 1, 2, 3, 70_000, 1L << 32, (1L << 32) + 7, 3L << 33};
    byte[] bytes = DeletionVectors.serialize(positions);
    long[] read =
        KernelInternals.readDeletionVector(
            engine,
            dir.toUri().toString(),
            "i",
            KernelInternals.encodeBase85(bytes),
            null,
            bytes.length,
            positions.length);
    assertArrayEquals(positions, read);
  }

  @Test
  void kernelReadsVectorsFromAFileAtTheirOffsets() throws IOException {
    long[] first = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 100_000};
    long[] second = new long[5000];
    for (int i = 0; i < second.length; i++) {
      second[i] = 2L * i;
    }
    DeletionVectors.VectorFile file =
        DeletionVectors.file(
            List.of(DeletionVectors.serialize(first), DeletionVectors.serialize(second)));
    UUID id = UUID.fromString("3a5c5f8c-2b1d-4d3e-9f60-123456789abc");
    String tableRoot = dir.toUri().toString();
    String vectorPath = KernelInternals.deletionVectorFilePath(tableRoot, id);
    assertEquals(
        dir.resolve("deletion_vector_" + id + ".bin").toString(),
        new org.apache.hadoop.fs.Path(vectorPath).toUri().getPath());
    Files.write(dir.resolve("deletion_vector_" + id + ".bin"), file.bytes());
    String encoded = KernelInternals.encodeUuid(id);
    assertEquals(20, encoded.length());
    DeletionVectors.Placement p1 = file.placements().get(0);
    DeletionVectors.Placement p2 = file.placements().get(1);
    assertArrayEquals(
        first,
        KernelInternals.readDeletionVector(
            engine, tableRoot, "u", encoded, p1.offset(), p1.sizeInBytes(), first.length));
    assertArrayEquals(
        second,
        KernelInternals.readDeletionVector(
            engine, tableRoot, "u", encoded, p2.offset(), p2.sizeInBytes(), second.length));
  }

  @Test
  void kernelRefusesAVectorWhoseCrcDoesNotMatch() throws IOException {
    DeletionVectors.VectorFile file =
        DeletionVectors.file(List.of(DeletionVectors.serialize(new long[] {4})));
    byte[] corrupt = file.bytes().clone();
    corrupt[corrupt.length - 1] ^= 1;
    UUID id = UUID.fromString("00000000-0000-0000-0000-000000000001");
    Files.write(dir.resolve("deletion_vector_" + id + ".bin"), corrupt);
    DeletionVectors.Placement p = file.placements().get(0);
    RuntimeException e =
        assertThrows(
            RuntimeException.class,
            () ->
                KernelInternals.readDeletionVector(
                    engine,
                    dir.toUri().toString(),
                    "u",
                    KernelInternals.encodeUuid(id),
                    p.offset(),
                    p.sizeInBytes(),
                    1));
    assertEquals("DV checksum mismatch", e.getMessage());
  }

  @Test
  void unionMergesSortedPositionsWithoutDuplicates() {
    assertArrayEquals(
        new long[] {0, 1, 3, 5, 8, 9},
        DeletionVectors.union(new long[] {1, 3, 5, 9}, new long[] {0, 3, 8, 9}));
    assertArrayEquals(new long[] {2}, DeletionVectors.union(new long[0], new long[] {2}));
  }

  @Test
  void negativePositionsAreRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> DeletionVectors.serialize(new long[] {-1}));
    assertEquals("A row position cannot be negative: -1", e.getMessage());
  }
}
