package org.lakecdc.transforms.silver;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.ChunkFact;

/**
 * What silver needs of the facts of chunked snapshots (docs/behaviour.md §10.2 steps 4 and 7,
 * §10.4): the newest chunked {@code snapshot_open} row for bronze (by S, whatever stream family
 * wrote it) with its plan and chunks ({@link ChunkedSnapshotFacts#read} of that family), the
 * targets that have a chunked open, and the key ranges of chunks for range deletes.
 */
final class OpenChunkedSnapshot {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One microsecond in nanoseconds. */
  private static final long MICRO = 1_000L;

  /** The largest TIMESTAMP_NTZ value (microseconds). */
  private static final LocalDateTime MAX_TIMESTAMP =
      LocalDateTime.of(9999, 12, 31, 23, 59, 59).plusNanos(999_999_000L);

  private static final BigInteger BIGINT_MAX = BigInteger.valueOf(Long.MAX_VALUE);

  /**
   * @param state the newest chunked snapshot of bronze, or empty
   * @param targets the targets with a chunked {@code snapshot_open} row, sorted
   */
  record Found(Optional<ChunkedSnapshotFacts.State> state, Set<String> targets) {}

  private OpenChunkedSnapshot() {}

  /**
   * Reads the chunked snapshot of {@code bronze} from {@code facts}: all empty when the facts table
   * does not exist. Targets are compared as one spelling ({@link TablePaths#normalize}); the
   * snapshot's own rows are then read under the spelling its open row has.
   */
  static Found read(DeltaTables tables, String facts, String bronze) {
    Set<String> targets = new TreeSet<>();
    if (!tables.exists(facts)) {
      return new Found(Optional.empty(), targets);
    }
    String wanted = normalized(bronze);
    String spelled = bronze;
    String appId = null;
    Lsn newest = null;
    Predicate opens =
        new Predicate(
            "=",
            new Column(FactsTable.EVENT),
            Literal.ofString(ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN));
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(facts, tables.version(facts), opens)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        if (!ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN.equals(row.get(FactsTable.EVENT))
            || !(row.get(FactsTable.TARGET) instanceof String target)
            || !(row.get(FactsTable.MIN_LSN) instanceof String s)
            || !(row.get(FactsTable.APP_ID) instanceof String id)
            || !chunked(row.get(FactsTable.DETAIL))) {
          continue;
        }
        targets.add(target);
        Lsn lsn = Lsn.parse(s);
        if (wanted.equals(normalized(target)) && (newest == null || lsn.isAfter(newest))) {
          newest = lsn;
          appId = id;
          spelled = target;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + facts, e);
    }
    if (appId == null) {
      return new Found(Optional.empty(), targets);
    }
    String family = appId.replaceFirst("\\.g[0-9]+$", "");
    return new Found(ChunkedSnapshotFacts.read(tables, facts, family, spelled).chunked(), targets);
  }

  /** A table path in its one spelling; a value that is no path stays as it is. */
  private static String normalized(String path) {
    try {
      return TablePaths.normalize(path);
    } catch (IllegalArgumentException e) {
      return path;
    }
  }

  private static boolean chunked(@Nullable Object detail) {
    if (!(detail instanceof String text)) {
      return false;
    }
    try {
      JsonNode node = JSON.readTree(text);
      return node != null
          && ChunkedSnapshotFacts.MODE_CHUNKED.equals(node.path("mode").asText(null));
    } catch (JsonProcessingException e) {
      return false;
    }
  }

  /**
   * The key kind range deletes compare (docs/behaviour.md §10.4), or null when they do not apply:
   * the key must be exactly the open row's keys, one column of an integer, {@code DATE} or {@code
   * TIMESTAMP_NTZ} type.
   */
  static OutputType.@Nullable Kind rangeKind(
      List<String> silverKeys, List<String> openKeys, OutputType keyType) {
    if (silverKeys.size() != 1
        || openKeys.size() != 1
        || !silverKeys
            .get(0)
            .toLowerCase(Locale.ROOT)
            .equals(openKeys.get(0).toLowerCase(Locale.ROOT))) {
      return null;
    }
    if (keyType.isInteger()) {
      return OutputType.Kind.BIGINT;
    }
    if (keyType.kind() == OutputType.Kind.DATE || keyType.kind() == OutputType.Kind.TIMESTAMP_NTZ) {
      return keyType.kind();
    }
    return null;
  }

  /**
   * A chunk's key range in the engine's values, {@code [lo, hi)}; a null end is open.
   *
   * @param lo the inclusive lower end, or null
   * @param hi the exclusive upper end, or null
   * @param wholeTable whether both ends are open (NULL keys are in the range only then)
   */
  record Range(@Nullable Comparable<?> lo, @Nullable Comparable<?> hi, boolean wholeTable) {
    /** Whether a silver key value (Java value of the key column, maybe null) is in the range. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    boolean contains(@Nullable Object key, OutputType.Kind kind) {
      if (key == null) {
        return wholeTable;
      }
      Comparable value = engineValue(key, kind);
      return (lo == null || value.compareTo(lo) >= 0) && (hi == null || value.compareTo(hi) < 0);
    }
  }

  /**
   * The range of a chunk's bounds as the engine compares them, or empty when it holds no engine
   * value (a lower bound past the type's largest value). Integers (JSON numbers or their text)
   * compare as BIGINT (an upper bound beyond BIGINT is open); dates and date-times are ISO-8601
   * text with {@code T} or a space; {@code datetime2(7)}'s microsecond rule: a lower bound with
   * sub-microsecond digits moves up one microsecond, an upper one is truncated, so keys of that
   * microsecond are never in the range; a {@code DATE} bound with a time of day likewise moves up
   * to the next day (lower) or is truncated (upper).
   *
   * @throws IllegalArgumentException when a bound does not read as the key's type
   */
  static Optional<Range> range(ChunkFact chunk, OutputType.Kind kind) {
    JsonNode lo = node(chunk.loJson());
    JsonNode hi = node(chunk.hiJson());
    boolean whole = lo.isNull() && hi.isNull();
    Comparable<?> low = null;
    Comparable<?> high = null;
    switch (kind) {
      case BIGINT -> {
        if (!lo.isNull()) {
          BigInteger v = integer(lo, chunk);
          if (v.compareTo(BIGINT_MAX) > 0) {
            return Optional.empty();
          }
          low = v.max(BigInteger.valueOf(Long.MIN_VALUE)).longValue();
        }
        if (!hi.isNull()) {
          BigInteger v = integer(hi, chunk);
          high = v.compareTo(BIGINT_MAX) > 0 ? null : v.longValue();
        }
      }
      case DATE -> {
        // A bound with a time of day: the lower moves up to the next day, the upper is truncated.
        if (!lo.isNull()) {
          LocalDateTime v = timestamp(lo, chunk);
          low =
              v.toLocalTime().equals(LocalTime.MIDNIGHT)
                  ? v.toLocalDate()
                  : v.toLocalDate().plusDays(1);
        }
        high = hi.isNull() ? null : timestamp(hi, chunk).toLocalDate();
      }
      default -> {
        if (!lo.isNull()) {
          LocalDateTime v = timestamp(lo, chunk);
          if (v.getNano() % MICRO != 0) {
            LocalDateTime up = v.truncatedTo(ChronoUnit.MICROS);
            if (!up.isBefore(MAX_TIMESTAMP)) {
              return Optional.empty();
            }
            v = up.plusNanos(MICRO);
          }
          low = v;
        }
        if (!hi.isNull()) {
          high = timestamp(hi, chunk).truncatedTo(ChronoUnit.MICROS);
        }
      }
    }
    return Optional.of(new Range(low, high, whole));
  }

  /** A silver key's Java value as the engine compares it: a Long, LocalDate or LocalDateTime. */
  static Comparable<?> engineValue(Object key, OutputType.Kind kind) {
    if (kind == OutputType.Kind.BIGINT) {
      return ((Number) key).longValue();
    }
    if (key instanceof java.time.Instant instant) {
      return LocalDateTime.ofInstant(instant, java.time.ZoneOffset.UTC);
    }
    return (Comparable<?>) key;
  }

  private static JsonNode node(String json) {
    try {
      JsonNode node = JSON.readTree(json);
      // A one-column key may be written as a one-element array (the composite form).
      return node != null && node.isArray() && node.size() == 1 ? node.get(0) : node;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Chunk bound is not JSON: " + json, e);
    }
  }

  private static BigInteger integer(JsonNode node, ChunkFact chunk) {
    if (node.isIntegralNumber()) {
      return node.bigIntegerValue();
    }
    try {
      return new BigInteger(node.asText().trim());
    } catch (NumberFormatException e) {
      throw badBound(node, chunk, "an integer");
    }
  }

  private static String text(JsonNode node, ChunkFact chunk) {
    if (!node.isTextual()) {
      throw badBound(node, chunk, "a date or date-time text");
    }
    return node.asText().trim();
  }

  private static LocalDateTime timestamp(JsonNode node, ChunkFact chunk) {
    String text = text(node, chunk).replace(' ', 'T');
    try {
      return text.length() == 10
          ? LocalDate.parse(text).atStartOfDay()
          : LocalDateTime.parse(text.endsWith("Z") ? text.substring(0, text.length() - 1) : text);
    } catch (DateTimeParseException e) {
      throw badBound(node, chunk, "an ISO-8601 date-time");
    }
  }

  private static IllegalArgumentException badBound(JsonNode node, ChunkFact chunk, String wanted) {
    return new IllegalArgumentException(
        "Chunk "
            + chunk.chunk()
            + " of the snapshot at "
            + chunk.s()
            + " has the bound "
            + node
            + ", which is not "
            + wanted
            + " as its key type needs");
  }
}
