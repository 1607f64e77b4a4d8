package org.lakecdc.transforms.reconcile;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One key range tier 2 compares row by row: a bucket's ordinals (a key with an ordinal) or a range
 * of the whole-table bucket cut on the server ({@code CdcClient.keyTiles}).
 *
 * @param bucket the bucket's index
 * @param lo the range's first key tuple (inclusive), or null when open (NULL keys included)
 * @param hi the key tuple the range ends before, or null when open
 * @param loOrdinal the first ordinal, or null without an ordinal
 * @param hiOrdinal the ordinal the range ends before, or null without an ordinal
 * @param loJson the bucket's first key as the report writes it, or null
 * @param hiJson the key the bucket ends before as the report writes it, or null
 */
public record Part(
    int bucket,
    @Nullable ArrayList<Object> lo,
    @Nullable ArrayList<Object> hi,
    @Nullable Long loOrdinal,
    @Nullable Long hiOrdinal,
    @Nullable String loJson,
    @Nullable String hiJson)
    implements Serializable {
  /** A range over key tuples. */
  static Part of(
      int bucket,
      @Nullable List<Object> lo,
      @Nullable List<Object> hi,
      @Nullable Long loOrdinal,
      @Nullable Long hiOrdinal,
      @Nullable String loJson,
      @Nullable String hiJson) {
    return new Part(
        bucket,
        lo == null ? null : new ArrayList<>(lo),
        hi == null ? null : new ArrayList<>(hi),
        loOrdinal,
        hiOrdinal,
        loJson,
        hiJson);
  }
}
