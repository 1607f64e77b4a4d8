package org.lakecdc.transforms.history;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The state of a history table at an instant T: the versions with {@code _valid_from_ts <= T} and
 * ({@code _valid_to_ts} NULL or {@code T < _valid_to_ts}), one per key that existed at T. Streamed
 * from the latest table version, a Parquet batch at a time, skipping files whose versions all began
 * after T.
 */
public final class HistoryState {
  private HistoryState() {}

  /**
   * The rows current at {@code at}.
   *
   * @param tables the Delta access
   * @param history the history table's path or URI
   * @param at the instant (UTC; the history's times are UTC commit times)
   * @return the rows, every column by name, as the tables' scan gives them; close it
   * @throws IllegalStateException when no table exists at the path
   */
  public static CloseableIterator<Map<String, Object>> at(
      DeltaTables tables, String history, Instant at) {
    LocalDateTime t = LocalDateTime.ofInstant(at, ZoneOffset.UTC);
    long micros = ChronoUnit.MICROS.between(Instant.EPOCH, at);
    Predicate begun =
        new Predicate("<=", new Column(HistoryTable.VALID_FROM_TS), Literal.ofTimestampNtz(micros));
    return tables
        .scanAtVersion(history, tables.version(history), begun)
        .filter(row -> isCurrentAt(row, t));
  }

  /**
   * The earliest {@code _valid_from_ts} of the history: where it starts (a history built after a
   * re-snapshot starts at the current generation, not at the source's first change). Streams the
   * table's latest version, a Parquet batch at a time; nothing is held but the earliest so far.
   *
   * @param tables the Delta access
   * @param history the history table's path or URI
   * @return the instant (UTC), empty when the history holds no version
   * @throws IllegalStateException when no table exists at the path
   * @throws UncheckedIOException when a data file cannot be read
   */
  public static Optional<Instant> firstValidFrom(DeltaTables tables, String history) {
    LocalDateTime first = null;
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(history, tables.version(history), null)) {
      while (rows.hasNext()) {
        LocalDateTime from = time(rows.next().get(HistoryTable.VALID_FROM_TS));
        if (from != null && (first == null || from.isBefore(first))) {
          first = from;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + history, e);
    }
    return Optional.ofNullable(first).map(t -> t.toInstant(ZoneOffset.UTC));
  }

  /**
   * Whether a history row was the current version of its key at {@code t} (UTC).
   *
   * @param row a history row as scanned
   * @param t the instant, UTC
   * @return {@code _valid_from_ts <= t} and ({@code _valid_to_ts} NULL or {@code t < _valid_to_ts})
   */
  public static boolean isCurrentAt(Map<String, Object> row, LocalDateTime t) {
    LocalDateTime from = time(row.get(HistoryTable.VALID_FROM_TS));
    LocalDateTime to = time(row.get(HistoryTable.VALID_TO_TS));
    return from != null && !from.isAfter(t) && (to == null || t.isBefore(to));
  }

  private static LocalDateTime time(Object value) {
    if (value instanceof Instant instant) {
      return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
    return (LocalDateTime) value;
  }
}
