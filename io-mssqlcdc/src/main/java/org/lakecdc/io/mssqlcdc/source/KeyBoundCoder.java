package org.lakecdc.io.mssqlcdc.source;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.BigDecimalCoder;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.DoubleCoder;
import org.apache.beam.sdk.coders.FloatCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The Beam coder of a key bound: a tuple of key values (one per key column, values may be null) or
 * null for an open bound. A count plus one (0 for an open bound, so an open bound and an empty
 * tuple differ), then each key value as a tag byte and the value in its own coder, so a value
 * decodes to the same Java type it had: {@code null}; Boolean; Short, Integer, Long
 * (variable-length); Float, Double (their IEEE bits); BigDecimal (unscaled value and scale: {@code
 * 1.50} stays {@code 1.50}); String; byte[]; and LocalDate, LocalDateTime, Instant, OffsetDateTime
 * as their ISO-8601 text — the key types {@link org.lakecdc.io.mssqlcdc.client.CdcClient#keyTiles}
 * returns. Not Java serialization, so snapshot ranges and chunks can live in runner state (a Flink
 * savepoint) across releases.
 *
 * <p>Not deterministic (floating point keys), which only a grouping key would need. Internal: the
 * snapshot and chunk coders use it.
 */
@Internal
public final class KeyBoundCoder extends AtomicCoder<@Nullable List<Object>> {
  private static final KeyBoundCoder INSTANCE = new KeyBoundCoder();
  private static final StringUtf8Coder STRING = StringUtf8Coder.of();
  private static final VarIntCoder INT = VarIntCoder.of();
  private static final VarLongCoder LONG = VarLongCoder.of();

  private static final int NULL = 0;
  private static final int BOOLEAN = 1;
  private static final int SHORT = 2;
  private static final int INTEGER = 3;
  private static final int LONG_VALUE = 4;
  private static final int FLOAT = 5;
  private static final int DOUBLE = 6;
  private static final int DECIMAL = 7;
  private static final int TEXT = 8;
  private static final int BYTES = 9;
  private static final int DATE = 10;
  private static final int DATETIME = 11;
  private static final int INSTANT = 12;
  private static final int OFFSET_DATETIME = 13;

  private KeyBoundCoder() {}

  /**
   * The coder.
   *
   * @return the one instance
   */
  public static KeyBoundCoder of() {
    return INSTANCE;
  }

  /**
   * Encodes a bound.
   *
   * @param bound the key values, or null for an open bound
   * @throws CoderException for a value of another type than those listed above
   */
  @Override
  public void encode(@Nullable List<Object> bound, OutputStream out) throws IOException {
    if (bound == null) {
      INT.encode(0, out);
      return;
    }
    INT.encode(bound.size() + 1, out);
    for (Object value : bound) {
      encodeValue(value, out);
    }
  }

  /**
   * Decodes a bound.
   *
   * @return the key values, or null for an open bound
   * @throws CoderException for an unknown tag or a value cut short
   */
  @Override
  public @Nullable List<Object> decode(InputStream in) throws IOException {
    int sizePlusOne = INT.decode(in);
    if (sizePlusOne == 0) {
      return null;
    }
    List<Object> bound = new ArrayList<>(sizePlusOne - 1);
    for (int i = 1; i < sizePlusOne; i++) {
      bound.add(decodeValue(in));
    }
    return bound;
  }

  @Override
  public void verifyDeterministic() throws NonDeterministicException {
    throw new NonDeterministicException(
        this, "A key bound may hold floating point values, whose encoding is not deterministic");
  }

  private static void encodeValue(@Nullable Object value, OutputStream out) throws IOException {
    if (value == null) {
      out.write(NULL);
    } else if (value instanceof Boolean b) {
      out.write(BOOLEAN);
      BooleanCoder.of().encode(b, out);
    } else if (value instanceof Short s) {
      out.write(SHORT);
      INT.encode((int) s, out);
    } else if (value instanceof Integer i) {
      out.write(INTEGER);
      INT.encode(i, out);
    } else if (value instanceof Long l) {
      out.write(LONG_VALUE);
      LONG.encode(l, out);
    } else if (value instanceof Float f) {
      out.write(FLOAT);
      FloatCoder.of().encode(f, out);
    } else if (value instanceof Double d) {
      out.write(DOUBLE);
      DoubleCoder.of().encode(d, out);
    } else if (value instanceof BigDecimal d) {
      out.write(DECIMAL);
      BigDecimalCoder.of().encode(d, out);
    } else if (value instanceof String s) {
      out.write(TEXT);
      STRING.encode(s, out);
    } else if (value instanceof byte[] b) {
      out.write(BYTES);
      ByteArrayCoder.of().encode(b, out);
    } else if (value instanceof LocalDate d) {
      out.write(DATE);
      STRING.encode(d.toString(), out);
    } else if (value instanceof LocalDateTime d) {
      out.write(DATETIME);
      STRING.encode(d.toString(), out);
    } else if (value instanceof Instant t) {
      out.write(INSTANT);
      STRING.encode(t.toString(), out);
    } else if (value instanceof OffsetDateTime t) {
      out.write(OFFSET_DATETIME);
      STRING.encode(t.toString(), out);
    } else {
      throw new CoderException(
          "A snapshot range's key value of type "
              + value.getClass().getName()
              + " cannot be encoded: key values are Boolean, Short, Integer, Long, Float, Double,"
              + " BigDecimal, String, byte[], LocalDate, LocalDateTime, Instant or OffsetDateTime");
    }
  }

  private static @Nullable Object decodeValue(InputStream in) throws IOException {
    int tag = in.read();
    switch (tag) {
      case NULL:
        return null;
      case BOOLEAN:
        return BooleanCoder.of().decode(in);
      case SHORT:
        return (short) (int) INT.decode(in);
      case INTEGER:
        return INT.decode(in);
      case LONG_VALUE:
        return LONG.decode(in);
      case FLOAT:
        return FloatCoder.of().decode(in);
      case DOUBLE:
        return DoubleCoder.of().decode(in);
      case DECIMAL:
        return BigDecimalCoder.of().decode(in);
      case TEXT:
        return STRING.decode(in);
      case BYTES:
        return ByteArrayCoder.of().decode(in);
      case DATE:
        return LocalDate.parse(STRING.decode(in));
      case DATETIME:
        return LocalDateTime.parse(STRING.decode(in));
      case INSTANT:
        return Instant.parse(STRING.decode(in));
      case OFFSET_DATETIME:
        return OffsetDateTime.parse(STRING.decode(in));
      case -1:
        throw new CoderException("Truncated snapshot range: a key value ends before its tag");
      default:
        throw new CoderException("Not a snapshot range key value: tag " + tag);
    }
  }
}
