package org.lakecdc.transforms.silver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.silver.OpenChunkedSnapshot.Range;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.ChunkFact;

/**
 * Chunk bounds as the engine compares them (docs/scenarios.md C182, C177) and when range deletes
 * apply.
 */
class OpenChunkedSnapshotTest {
  private static final LocalDateTime BASE = LocalDateTime.of(2026, 1, 1, 0, 0, 3);

  private static ChunkFact chunk(String lo, String hi) {
    Lsn s = Lsn.parse("0x00000000000000000064");
    return new ChunkFact(
        "app", "bronze", s, 0, 0, lo, hi, false, 0, s, null, null, null, null, null, null);
  }

  private static Range range(String lo, String hi, OutputType.Kind kind) {
    return OpenChunkedSnapshot.range(chunk(lo, hi), kind).orElseThrow();
  }

  private static String text(String value) {
    return "\"" + value + "\"";
  }

  @Test
  void c182NullBoundsAreOpenForAnyType() {
    for (OutputType.Kind kind :
        List.of(OutputType.Kind.BIGINT, OutputType.Kind.DATE, OutputType.Kind.TIMESTAMP_NTZ)) {
      assertEquals(new Range(null, null, true), range("null", "null", kind));
    }
    assertEquals(new Range(null, 3L, false), range("null", "3", OutputType.Kind.BIGINT));
  }

  @Test
  void c182IntegerBoundsAreBigintAndMaxPlusOneIsOpen() {
    assertEquals(
        new Range(3L, null, false), range("\"3\"", "9223372036854775808", OutputType.Kind.BIGINT));
    assertEquals(
        new Range(-9223372036854775808L, 9223372036854775807L, false),
        range("-9223372036854775808", "9223372036854775807", OutputType.Kind.BIGINT));
    Range r = range("3", "5", OutputType.Kind.BIGINT);
    assertFalse(r.contains((short) 2, OutputType.Kind.BIGINT));
    assertTrue(r.contains(3, OutputType.Kind.BIGINT));
    assertTrue(r.contains(4L, OutputType.Kind.BIGINT));
    assertFalse(r.contains(5, OutputType.Kind.BIGINT));
    assertFalse(r.contains(null, OutputType.Kind.BIGINT));
    assertTrue(
        range("null", "null", OutputType.Kind.BIGINT).contains(null, OutputType.Kind.BIGINT));
  }

  @Test
  void c182DateBounds() {
    LocalDate day = LocalDate.of(2026, 1, 3);
    for (String bound :
        List.of("2026-01-03", "2026-01-03 00:00:00", "2026-01-03T00:00:00.0000000")) {
      assertEquals(
          new Range(day, day, false), range(text(bound), text(bound), OutputType.Kind.DATE));
    }
    // A time of day: the lower bound moves to the next day, the upper is truncated.
    assertEquals(
        new Range(day.plusDays(1), day, false),
        range(text("2026-01-03 00:00:00.0000001"), text("2026-01-03 12:00"), OutputType.Kind.DATE));
  }

  @Test
  void c182TimestampBoundsFollowTheMicrosecondRule() {
    String[][] cases = {
      {"", "0", "0"},
      {".5", "500000000", "500000000"},
      {".123456", "123456000", "123456000"},
      {".1234560", "123456000", "123456000"},
      {".1234567", "123457000", "123456000"},
      {".9999999", "1000000000", "999999000"},
    };
    for (String[] c : cases) {
      for (String separator : List.of("T", " ")) {
        String bound = text("2026-01-01" + separator + "00:00:03" + c[0]);
        Range r = range(bound, bound, OutputType.Kind.TIMESTAMP_NTZ);
        assertEquals(BASE.plusNanos(Long.parseLong(c[1])), r.lo(), c[0]);
        assertEquals(BASE.plusNanos(Long.parseLong(c[2])), r.hi(), c[0]);
      }
    }
    LocalDateTime max = LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000);
    assertEquals(
        max,
        range("null", text("9999-12-31 23:59:59.9999999"), OutputType.Kind.TIMESTAMP_NTZ).hi());
    assertEquals(
        max,
        range(text("9999-12-31 23:59:59.9999990"), "null", OutputType.Kind.TIMESTAMP_NTZ).lo());
    assertEquals(
        Optional.empty(),
        OpenChunkedSnapshot.range(
            chunk(text("9999-12-31 23:59:59.9999999"), "null"), OutputType.Kind.TIMESTAMP_NTZ));
  }

  @Test
  void c182RangeDeletesOnlyForOneIntegerDateOrTimestampKeyEqualToTheCut() {
    List<String> id = List.of("order_id");
    assertEquals(
        OutputType.Kind.BIGINT,
        OpenChunkedSnapshot.rangeKind(id, List.of("ORDER_ID"), OutputType.SMALLINT));
    assertEquals(OutputType.Kind.DATE, OpenChunkedSnapshot.rangeKind(id, id, OutputType.DATE));
    assertEquals(
        OutputType.Kind.TIMESTAMP_NTZ,
        OpenChunkedSnapshot.rangeKind(id, id, OutputType.TIMESTAMP_NTZ));
    assertNull(OpenChunkedSnapshot.rangeKind(id, List.of("status"), OutputType.INT));
    assertNull(OpenChunkedSnapshot.rangeKind(List.of("order_id", "status"), id, OutputType.INT));
    assertNull(OpenChunkedSnapshot.rangeKind(id, List.of("order_id", "status"), OutputType.INT));
    for (OutputType type :
        List.of(
            OutputType.STRING,
            OutputType.decimal(38, 0),
            OutputType.DOUBLE,
            OutputType.FLOAT,
            OutputType.BOOLEAN,
            OutputType.BINARY,
            OutputType.TIMESTAMP)) {
      assertNull(OpenChunkedSnapshot.rangeKind(id, id, type), type.toString());
    }
  }
}
