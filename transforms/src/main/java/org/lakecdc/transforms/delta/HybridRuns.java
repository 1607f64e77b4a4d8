package org.lakecdc.transforms.delta;

import java.nio.ByteBuffer;

/**
 * A decoder of Parquet's RLE/bit-packing hybrid encoding (the format's "RLE" encoding of definition
 * levels and of dictionary ids) that steps over values a run at a time: a run-length run of any
 * length is passed in one step, a bit-packed run by arithmetic on its offset, and only the values
 * asked for are unpacked. parquet-java's {@code RunLengthBitPackingHybridDecoder} gives one value
 * per call, which made stepping over the rows between wanted ones most of {@link ParquetRowsAt}'s
 * time.
 *
 * <p>Layout (Parquet format, Encodings.md "Run Length Encoding / Bit-Packing Hybrid"): a sequence
 * of runs, each an unsigned LEB128 varint header; an even header is a run-length run of {@code
 * header >>> 1} copies of one value stored in {@code ceil(bitWidth / 8)} little-endian bytes, an
 * odd header a bit-packed run of {@code (header >>> 1) * 8} values of {@code bitWidth} bits each,
 * packed from the least significant bit of each byte. A run may declare more values than the page
 * holds (padding); only the page's count are read.
 */
final class HybridRuns {
  private final ByteBuffer data;
  private final int bitWidth;
  private final int valueBytes;
  private final long mask;
  private int left;
  private boolean repeated;
  private int value;
  private int packedStart;
  private int packedIndex;

  /**
   * @param data the encoded runs from its position to its limit (no length prefix)
   * @param bitWidth bits per value, 0 to 32
   */
  HybridRuns(ByteBuffer data, int bitWidth) {
    if (bitWidth < 0 || bitWidth > 32) {
      throw new IllegalArgumentException("bit width " + bitWidth + " is not within 0 to 32");
    }
    this.data = data;
    this.bitWidth = bitWidth;
    this.valueBytes = (bitWidth + 7) / 8;
    this.mask = (1L << bitWidth) - 1;
  }

  /** The next value. */
  int next() {
    if (left == 0) {
      nextRun();
    }
    left--;
    return repeated ? value : unpack(packedIndex++);
  }

  /** Steps over {@code n} values. */
  void skip(int n) {
    while (n > 0) {
      if (left == 0) {
        nextRun();
      }
      int take = Math.min(n, left);
      if (!repeated) {
        packedIndex += take;
      }
      left -= take;
      n -= take;
    }
  }

  /** Steps over {@code n} values; how many of them equal {@code wanted}. */
  int count(int n, int wanted) {
    int found = 0;
    while (n > 0) {
      if (left == 0) {
        nextRun();
      }
      int take = Math.min(n, left);
      if (repeated) {
        if (value == wanted) {
          found += take;
        }
      } else {
        for (int i = 0; i < take; i++) {
          if (unpack(packedIndex + i) == wanted) {
            found++;
          }
        }
        packedIndex += take;
      }
      left -= take;
      n -= take;
    }
    return found;
  }

  private void nextRun() {
    if (!data.hasRemaining()) {
      throw new IllegalStateException("Parquet RLE/bit-packed runs end before the page's values");
    }
    int header = varint();
    if ((header & 1) == 0) {
      repeated = true;
      left = header >>> 1;
      int v = 0;
      for (int i = 0; i < valueBytes; i++) {
        v |= (data.get() & 0xFF) << (8 * i);
      }
      value = v;
    } else {
      repeated = false;
      int groups = header >>> 1;
      left = groups * 8;
      packedStart = data.position();
      packedIndex = 0;
      data.position((int) Math.min(data.limit(), packedStart + (long) groups * bitWidth));
    }
    if (left <= 0) {
      throw new IllegalStateException("Parquet RLE/bit-packed run of " + left + " values");
    }
  }

  private int unpack(int index) {
    if (bitWidth == 0) {
      return 0;
    }
    long bit = (long) index * bitWidth;
    int at = packedStart + (int) (bit >>> 3);
    int shift = (int) (bit & 7);
    long word = 0;
    int end = Math.min(data.limit(), at + (shift + bitWidth + 7) / 8);
    for (int i = at; i < end; i++) {
      word |= (long) (data.get(i) & 0xFF) << (8 * (i - at));
    }
    return (int) ((word >>> shift) & mask);
  }

  private int varint() {
    int result = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      int b = data.get() & 0xFF;
      result |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return result;
      }
    }
    throw new IllegalStateException("Parquet RLE/bit-packed run header longer than 5 bytes");
  }
}
