package org.lakecdc.io.mssqlcdc.snapshot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.SNAPSHOT_AT;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.Resolved;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/** The planned key ranges of a snapshot travel with their own coder, not Java serialization. */
class SnapshotRangeCoderTest {
  @TempDir Path dir;

  private static final Instant AT = Instant.parse("2026-09-28T14:50:00.123456700Z");

  private static SnapshotRange roundTrip(SnapshotRange range) throws CoderException {
    return CoderUtils.decodeFromByteArray(
        SnapshotRangeCoder.of(), CoderUtils.encodeToByteArray(SnapshotRangeCoder.of(), range));
  }

  @Test
  void everyKeyTypeComesBackWithItsValueAndItsJavaType() throws Exception {
    List<Object> lower =
        Arrays.asList(
            null,
            true,
            (short) -7,
            42,
            9_000_000_000L,
            1.5f,
            -0.25d,
            new BigDecimal("1.50"),
            "Zoë",
            new byte[] {0, 1, (byte) 0xFF},
            LocalDate.of(2026, 9, 28),
            LocalDateTime.of(2026, 9, 28, 13, 50),
            Instant.parse("2026-09-28T13:50:00.1234567Z"),
            OffsetDateTime.of(2026, 9, 28, 13, 50, 1, 500, ZoneOffset.ofHours(-3)));
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < lower.size(); i++) {
      keys.add("k" + i);
    }
    SnapshotRange range = new SnapshotRange("dbo", "orders", keys, lower, List.of(43, ""), AT, 5);

    SnapshotRange decoded = roundTrip(range);

    assertEquals("dbo", decoded.sourceSchema());
    assertEquals("orders", decoded.sourceTable());
    assertEquals(keys, decoded.keyColumns());
    assertEquals(AT, decoded.commitTime());
    assertEquals(5, decoded.number());
    assertEquals(List.of(43, ""), decoded.upperExclusive());
    List<Object> back = decoded.lowerInclusive();
    assertEquals(lower.size(), back.size());
    for (int i = 0; i < lower.size(); i++) {
      Object want = lower.get(i);
      Object got = back.get(i);
      if (want == null) {
        assertNull(got, "value " + i);
      } else if (want instanceof byte[] bytes) {
        assertArrayEquals(bytes, (byte[]) got, "value " + i);
      } else {
        assertEquals(want, got, "value " + i);
        assertEquals(want.getClass(), got.getClass(), "type of value " + i);
      }
    }
    assertEquals(2, ((BigDecimal) back.get(7)).scale(), "the decimal's scale is kept");
  }

  @Test
  void openBoundsEmptyTuplesAndATableWithoutKeysStayApart() throws Exception {
    SnapshotRange whole = new SnapshotRange("sales", "notes", List.of(), null, null, AT, 0);
    SnapshotRange decoded = roundTrip(whole);
    assertEquals(whole, decoded);
    assertEquals(List.of(), decoded.keyColumns());
    assertNull(decoded.lowerInclusive());
    assertNull(decoded.upperExclusive());

    SnapshotRange empty = new SnapshotRange("", "t", List.of("id"), List.of(), null, AT, 1);
    SnapshotRange back = roundTrip(empty);
    assertEquals(List.of(), back.lowerInclusive(), "an empty tuple is not an open bound");
    assertNull(back.upperExclusive());
    assertEquals("", back.sourceSchema());
  }

  @Test
  void aKeyValueOfAnotherTypeIsRefusedNamingItsType() {
    SnapshotRange odd =
        new SnapshotRange(
            "dbo", "orders", List.of("id"), List.of(new StringBuilder("x")), null, AT, 0);
    CoderException e =
        assertThrows(
            CoderException.class, () -> CoderUtils.encodeToByteArray(SnapshotRangeCoder.of(), odd));
    assertEquals(
        "A snapshot range's key value of type java.lang.StringBuilder cannot be encoded: key values"
            + " are Boolean, Short, Integer, Long, Float, Double, BigDecimal, String, byte[],"
            + " LocalDate, LocalDateTime, Instant or OffsetDateTime",
        e.getMessage());
  }

  @Test
  void theSnapshotsPlannedRangesUseTheCoderNotJavaSerialization() {
    FakeSqlServer db = FakeScenarios.snapshotScenario(dir);
    SourceConfiguration source =
        SourceConfiguration.create(FakeScenarios.CI).withClientFactory(db.clientFactory());
    SnapshotSpec spec =
        Resolved.spec(MssqlCdcIO.snapshot().withSourceConfiguration(source).withNumPartitions(3));
    assertEquals(SNAPSHOT_AT, spec.snapshotLsn());
    Pipeline pipeline = Pipeline.create();
    PCollection<SnapshotRange> ranges = spec.ranges(pipeline.begin());
    assertEquals(SnapshotRangeCoder.of(), ranges.getCoder());
    List<String> serialized = new ArrayList<>();
    pipeline.traverseTopologically(
        new Pipeline.PipelineVisitor.Defaults() {
          @Override
          public void visitValue(PValue value, TransformHierarchy.Node producer) {
            if (value instanceof PCollection<?> collection
                && collection.getCoder() instanceof SerializableCoder<?> coder
                && coder.getRecordType().equals(SnapshotRange.class)) {
              serialized.add(producer.getFullName());
            }
          }
        });
    assertEquals(List.of(), serialized, "steps whose ranges are Java-serialized");
  }
}
