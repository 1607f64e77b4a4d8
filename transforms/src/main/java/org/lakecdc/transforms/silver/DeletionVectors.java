package org.lakecdc.transforms.silver;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32;
import org.roaringbitmap.RoaringBitmap;

/**
 * Delta deletion vectors as bytes, written from the Delta protocol (PROTOCOL.md "Deletion Vector
 * Format"; Kernel 4.4 reads them but has no writer).
 *
 * <p>A vector is a set of row positions (0-based, in the order the Parquet file holds its rows)
 * serialized as a {@code RoaringBitmapArray} in the portable format: the magic number {@value
 * #PORTABLE_MAGIC} (int32 little-endian), the number of 32-bit bitmaps (int64 little-endian), then
 * per bitmap its key, the high 32 bits of its positions (int32 little-endian), and the bitmap in
 * Roaring's portable serialization ({@link RoaringBitmap#serialize}, little-endian). A vector file
 * ({@code deletion_vector_<uuid>.bin}) is a version byte {@value #FILE_FORMAT_VERSION}, then per
 * vector: its size in bytes (int32 big-endian), the serialized vector, and the CRC-32 of the
 * serialized vector (int32 big-endian). A descriptor's {@code offset} is where its size field
 * starts and {@code sizeInBytes} the serialized vector's length without the size and CRC.
 *
 * <p>Shared by the MERGE ({@link SilverMerge}) and maintenance: stateless and thread-safe.
 */
public final class DeletionVectors {
  /** The magic number of the portable {@code RoaringBitmapArray} serialization. */
  public static final int PORTABLE_MAGIC = 1681511377;

  /** The format version byte a deletion vector file starts with. */
  public static final int FILE_FORMAT_VERSION = 1;

  private DeletionVectors() {}

  /**
   * Serializes a set of row positions as a portable {@code RoaringBitmapArray}.
   *
   * @param positions row positions, each in {@code [0, 2^63)} (any order, duplicates allowed)
   * @return the bytes, magic number first
   * @throws IllegalArgumentException when a position is negative
   */
  public static byte[] serialize(long[] positions) {
    TreeMap<Integer, RoaringBitmap> bitmaps = new TreeMap<>();
    for (long position : positions) {
      if (position < 0) {
        throw new IllegalArgumentException("A row position cannot be negative: " + position);
      }
      int high = (int) (position >>> 32);
      bitmaps.computeIfAbsent(high, h -> new RoaringBitmap()).add((int) position);
    }
    // The format has a bitmap for every key from 0 to the highest one (empty ones included).
    int highest = bitmaps.isEmpty() ? -1 : bitmaps.lastKey();
    List<RoaringBitmap> ordered = new ArrayList<>();
    for (int key = 0; key <= highest; key++) {
      RoaringBitmap bitmap = bitmaps.getOrDefault(key, new RoaringBitmap());
      bitmap.runOptimize();
      ordered.add(bitmap);
    }
    int size = 4 + 8;
    for (RoaringBitmap bitmap : ordered) {
      size += 4 + bitmap.serializedSizeInBytes();
    }
    ByteBuffer buffer = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    buffer.putInt(PORTABLE_MAGIC);
    buffer.putLong(ordered.size());
    for (int key = 0; key < ordered.size(); key++) {
      buffer.putInt(key);
      ordered.get(key).serialize(buffer);
    }
    if (buffer.hasRemaining()) {
      throw new IllegalStateException(
          "Deletion vector serialized to " + buffer.position() + " bytes, expected " + size);
    }
    return buffer.array();
  }

  /**
   * Where one vector sits in a {@linkplain #file vector file}.
   *
   * @param offset the offset of its size field from the start of the file
   * @param sizeInBytes the serialized vector's length (without the size and CRC fields)
   */
  public record Placement(int offset, int sizeInBytes) {}

  /**
   * A vector file's content and where each vector sits in it.
   *
   * @param bytes the file's content
   * @param placements per vector, in the order given
   */
  public record VectorFile(byte[] bytes, List<Placement> placements) {}

  /**
   * A deletion vector file holding these serialized vectors, in order.
   *
   * @param vectors serialized vectors ({@link #serialize})
   * @return the content and each vector's offset and size
   * @throws IllegalArgumentException when the file would pass 2 GiB (offsets are int32)
   */
  public static VectorFile file(List<byte[]> vectors) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<Placement> placements = new ArrayList<>(vectors.size());
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(FILE_FORMAT_VERSION);
      for (byte[] vector : vectors) {
        if ((long) out.size() + 8 + vector.length > Integer.MAX_VALUE) {
          throw new IllegalArgumentException(
              "A deletion vector file cannot pass 2 GiB; write fewer vectors per file");
        }
        placements.add(new Placement(out.size(), vector.length));
        out.writeInt(vector.length);
        out.write(vector);
        CRC32 crc = new CRC32();
        crc.update(vector);
        out.writeInt((int) crc.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new VectorFile(bytes.toByteArray(), List.copyOf(placements));
  }

  /**
   * The union of two sorted position arrays, sorted, without duplicates.
   *
   * @param a ascending positions
   * @param b ascending positions
   * @return the ascending union
   */
  public static long[] union(long[] a, long[] b) {
    long[] out = new long[a.length + b.length];
    int i = 0;
    int j = 0;
    int n = 0;
    while (i < a.length || j < b.length) {
      long next;
      if (j >= b.length || (i < a.length && a[i] <= b[j])) {
        next = a[i++];
      } else {
        next = b[j++];
      }
      if (n == 0 || out[n - 1] != next) {
        out[n++] = next;
      }
    }
    return n == out.length ? out : java.util.Arrays.copyOf(out, n);
  }

  /**
   * The new deletion vectors of some data files, in one vector file.
   *
   * @param file the vector file's content, or null when no file gets a vector
   * @param updates per file, where its vector is in the file and how many rows it deletes
   */
  public record Vectors(
      byte @org.checkerframework.checker.nullness.qual.Nullable [] file,
      List<org.lakecdc.transforms.delta.DeletionVectorUpdate> updates) {}

  /**
   * Each file's new vector: the positions its existing vector deletes and the new ones, in one
   * vector file.
   *
   * @param existing per file, the positions its vector deletes now (ascending; empty without one)
   * @param deletions per file (by its {@code add} path), the positions to delete now
   * @return the vector file and the updates, in the files' path order
   */
  public static Vectors merged(
      java.util.Map<String, long[]> existing, java.util.Map<String, List<Long>> deletions) {
    List<org.lakecdc.transforms.delta.DeletionVectorUpdate> updates = new ArrayList<>();
    if (deletions.isEmpty()) {
      return new Vectors(null, updates);
    }
    List<String> files = new ArrayList<>(new TreeMap<>(deletions).keySet());
    List<byte[]> vectors = new ArrayList<>(files.size());
    List<long[]> merged = new ArrayList<>(files.size());
    for (String file : files) {
      long[] positions = deletions.get(file).stream().mapToLong(Long::longValue).sorted().toArray();
      long[] all = union(existing.get(file), positions);
      merged.add(all);
      vectors.add(serialize(all));
    }
    VectorFile content = file(vectors);
    for (int i = 0; i < files.size(); i++) {
      Placement placement = content.placements().get(i);
      updates.add(
          new org.lakecdc.transforms.delta.DeletionVectorUpdate(
              files.get(i), placement.offset(), placement.sizeInBytes(), merged.get(i).length));
    }
    return new Vectors(content.bytes(), updates);
  }
}
