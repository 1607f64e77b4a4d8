package org.lakecdc.transforms.reconcile;

import java.io.Serializable;
import java.time.LocalDate;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.ValueConverter;

/**
 * The ordinal of a one-column key that tier 1 can bucket (docs/behaviour.md §11.2): an integer key
 * (SMALLINT, INT, BIGINT; SQL Server {@code tinyint}, {@code smallint}, {@code int}, {@code
 * bigint}) is its own ordinal; a DATE key is its days since 1970-01-01 (negative before), as {@code
 * CdcClient.keyBuckets} computes it on the server. Both sides order keys alike by ordinal.
 *
 * <p>A bucket bound is an ordinal; {@link #bound} turns it into a key value of the column's type
 * for range reads, clamped into the type's range (C195): an ordinal below the first value is the
 * first value (the bound then excludes nothing), one beyond the last value is no bound (open).
 */
public final class KeyOrdinal implements Serializable {
  private static final long serialVersionUID = 1L;

  private static final long MIN_DAY = ValueConverter.MIN_DATE.toEpochDay();
  private static final long MAX_DAY = ValueConverter.MAX_DATE.toEpochDay();

  private final OutputType type;

  private KeyOrdinal(OutputType type) {
    this.type = type;
  }

  /**
   * The ordinal of keys of this output type.
   *
   * @param type the key column's output type
   * @return the ordinal, or empty for a type without one (strings, decimals, times, ...)
   */
  public static Optional<KeyOrdinal> of(OutputType type) {
    switch (type.kind()) {
      case SMALLINT:
      case INT:
      case BIGINT:
      case DATE:
        return Optional.of(new KeyOrdinal(type));
      default:
        return Optional.empty();
    }
  }

  /** The key column's output type. */
  public OutputType type() {
    return type;
  }

  /**
   * The ordinal of a key value.
   *
   * @param value a Short, Integer or Long (integer keys) or a LocalDate (DATE keys), not null
   * @return the ordinal
   * @throws IllegalArgumentException when the value is of another Java type
   */
  public long ordinal(Object value) {
    if (value instanceof LocalDate d) {
      return d.toEpochDay();
    }
    if (value instanceof Short || value instanceof Integer || value instanceof Long) {
      return ((Number) value).longValue();
    }
    throw new IllegalArgumentException(
        "A " + type + " key cannot hold " + value.getClass().getSimpleName() + " value " + value);
  }

  /**
   * The key value of a bucket bound, clamped into the type's range (C195).
   *
   * @param ordinal the bound's ordinal
   * @return the value (Short, Integer, Long or LocalDate), or null when the ordinal is beyond the
   *     type's last value (the bound is open)
   */
  public @Nullable Object bound(long ordinal) {
    long min;
    long max;
    switch (type.kind()) {
      case SMALLINT:
        min = Short.MIN_VALUE;
        max = Short.MAX_VALUE;
        break;
      case INT:
        min = Integer.MIN_VALUE;
        max = Integer.MAX_VALUE;
        break;
      case BIGINT:
        min = Long.MIN_VALUE;
        max = Long.MAX_VALUE;
        break;
      default:
        min = MIN_DAY;
        max = MAX_DAY;
    }
    if (ordinal > max) {
      return null;
    }
    long clamped = Math.max(ordinal, min);
    switch (type.kind()) {
      case SMALLINT:
        return (short) clamped;
      case INT:
        return (int) clamped;
      case BIGINT:
        return clamped;
      default:
        return LocalDate.ofEpochDay(clamped);
    }
  }

  /**
   * A bucket bound as the report writes it: JSON text of {@link #bound} ({@code -3}, {@code
   * "1970-01-01"}), or null when open.
   *
   * @param ordinal the bound's ordinal
   * @return the JSON text, or null
   */
  public @Nullable String boundJson(long ordinal) {
    Object value = bound(ordinal);
    return value == null ? null : KeyJson.value(value);
  }
}
