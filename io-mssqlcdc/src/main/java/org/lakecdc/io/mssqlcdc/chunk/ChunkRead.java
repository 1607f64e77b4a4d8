package org.lakecdc.io.mssqlcdc.chunk;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.DoubleCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.StructuredCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.io.mssqlcdc.source.KeyBoundCoder;
import org.lakecdc.io.mssqlcdc.source.RowSink;

/**
 * What the read of one chunk of a chunked snapshot ({@link
 * org.lakecdc.io.mssqlcdc.MssqlCdcIO#snapshotChunks()}) did: its stamp, the end it read to, the
 * {@code max_lsn} after it, its timing and rows, and what the {@link RowSink} returned for its
 * rows. Times are UTC.
 *
 * @param chunk the chunk's index in the plan (also the sequence its rows were written with)
 * @param stamp L: the snapshot-LSN rule ({@link SnapshotLsn}) read right before the chunk's SELECT,
 *     the {@code _start_lsn} of its rows; never below S
 * @param stampCommitTime the commit time of L ({@code _commit_ts} of its rows): that of L, or of
 *     the last commit before L when L is no commit LSN
 * @param hiRead the end the chunk was read to: the plan's {@code hi}, or for an open last chunk
 *     with {@link org.lakecdc.io.mssqlcdc.MssqlCdcIO.SnapshotChunks#withOpenEndAfter} the first key
 *     after MAX sought right before the read; null when the read was open-ended
 * @param highLsn {@code max_lsn} read right after the read, or null when CDC has none
 * @param highCommitTime the commit time of {@code highLsn}, or null
 * @param startedAt when the chunk's work started (before the stamp was read)
 * @param readSeconds seconds from the stamp to the last row written, at least 0
 * @param rows the rows read and handed to the sink, at least 0
 * @param result what the sink returned for the chunk's rows
 * @param <R> the sink's result type
 */
public record ChunkRead<R>(
    int chunk,
    Lsn stamp,
    Instant stampCommitTime,
    @Nullable List<Object> hiRead,
    @Nullable Lsn highLsn,
    @Nullable Instant highCommitTime,
    Instant startedAt,
    double readSeconds,
    long rows,
    R result) {

  /**
   * Checks the fields and copies {@code hiRead}.
   *
   * @throws IllegalArgumentException when {@code chunk} or {@code rows} is negative
   */
  public ChunkRead {
    if (chunk < 0) {
      throw new IllegalArgumentException("A chunk index must be at least 0, not " + chunk);
    }
    if (rows < 0) {
      throw new IllegalArgumentException("A chunk's rows must be at least 0, not " + rows);
    }
    Objects.requireNonNull(stamp, "stamp");
    Objects.requireNonNull(stampCommitTime, "stampCommitTime");
    Objects.requireNonNull(startedAt, "startedAt");
    hiRead = hiRead == null ? null : Collections.unmodifiableList(new ArrayList<>(hiRead));
  }

  /**
   * This read with another result (what the reading stage emits after {@link AfterChunkRead}).
   *
   * @param <O> the new result's type
   */
  public <O> ChunkRead<O> withResult(O other) {
    return new ChunkRead<>(
        chunk,
        stamp,
        stampCommitTime,
        hiRead,
        highLsn,
        highCommitTime,
        startedAt,
        readSeconds,
        rows,
        other);
  }

  /**
   * The coder of chunk reads whose results {@code resultCoder} encodes: the fields in order, LSNs
   * and times as text, {@code hiRead} as {@link KeyBoundCoder} encodes a key bound (so each value
   * decodes to its Java type). Not Java serialization, so reads can live in runner state.
   */
  public static <R> Coder<ChunkRead<R>> coder(Coder<R> resultCoder) {
    return new ChunkReadCoder<>(resultCoder);
  }

  private static final class ChunkReadCoder<R> extends StructuredCoder<ChunkRead<R>> {
    private static final StringUtf8Coder TEXT = StringUtf8Coder.of();
    private static final Coder<String> OPTIONAL_TEXT = NullableCoder.of(StringUtf8Coder.of());
    private final Coder<R> resultCoder;

    ChunkReadCoder(Coder<R> resultCoder) {
      this.resultCoder = Objects.requireNonNull(resultCoder, "resultCoder");
    }

    @Override
    public void encode(ChunkRead<R> value, OutputStream out) throws IOException {
      VarIntCoder.of().encode(value.chunk(), out);
      TEXT.encode(value.stamp().toString(), out);
      TEXT.encode(value.stampCommitTime().toString(), out);
      KeyBoundCoder.of().encode(value.hiRead(), out);
      OPTIONAL_TEXT.encode(value.highLsn() == null ? null : value.highLsn().toString(), out);
      OPTIONAL_TEXT.encode(
          value.highCommitTime() == null ? null : value.highCommitTime().toString(), out);
      TEXT.encode(value.startedAt().toString(), out);
      DoubleCoder.of().encode(value.readSeconds(), out);
      VarLongCoder.of().encode(value.rows(), out);
      resultCoder.encode(value.result(), out);
    }

    @Override
    public ChunkRead<R> decode(InputStream in) throws IOException {
      int chunk = VarIntCoder.of().decode(in);
      Lsn stamp = Lsn.parse(TEXT.decode(in));
      Instant stampTime = Instant.parse(TEXT.decode(in));
      List<Object> hi = KeyBoundCoder.of().decode(in);
      String high = OPTIONAL_TEXT.decode(in);
      String highTime = OPTIONAL_TEXT.decode(in);
      Instant started = Instant.parse(TEXT.decode(in));
      double seconds = DoubleCoder.of().decode(in);
      long rows = VarLongCoder.of().decode(in);
      R result = resultCoder.decode(in);
      return new ChunkRead<>(
          chunk,
          stamp,
          stampTime,
          hi,
          high == null ? null : Lsn.parse(high),
          highTime == null ? null : Instant.parse(highTime),
          started,
          seconds,
          rows,
          result);
    }

    @Override
    public List<? extends Coder<?>> getCoderArguments() {
      return List.of(resultCoder);
    }

    @Override
    public void verifyDeterministic() throws NonDeterministicException {
      throw new NonDeterministicException(
          this, "A key bound may hold floating point values, whose encoding is not deterministic");
    }
  }
}
