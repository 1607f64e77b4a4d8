package org.lakecdc.io.mssqlcdc.read;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.time.LocalDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.SplitPoint;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** Planning rules: the cut at a newer instance's S and the balanced parts (C018, C019, C031). */
class RangePlannerTest {
  /** {@code _lsn(n)} of the reference tests: the LSN whose value is n. */
  private static Lsn n(long value) {
    return Lsn.fromBigInteger(BigInteger.valueOf(value));
  }

  private static SplitPoint tile(long bound, long rows) {
    return new SplitPoint(n(bound), n(bound + 1), rows);
  }

  private static List<List<Long>> values(List<Lsn[]> parts) {
    return parts.stream()
        .map(p -> Arrays.stream(p).map(l -> l.toBigInteger().longValueExact()).toList())
        .toList();
  }

  private static CaptureInstance instance(String name, Long start) {
    return new CaptureInstance(
        name,
        "dbo",
        "orders",
        Optional.ofNullable(start).map(RangePlannerTest::n),
        Optional.of(LocalDateTime.of(2026, 9, 28, 13, 0)),
        List.of("order_id"));
  }

  @Test
  void c018ASharedBoundIsCollapsedAndTheBoundAtHiEndsTheLastPart() {
    List<SplitPoint> tiles =
        List.of(new SplitPoint(n(5), n(6), 1), new SplitPoint(n(5), n(6), 1), tile(9, 1));
    assertEquals(
        List.of(List.of(1L, 5L), List.of(6L, 9L)),
        values(RangePlanner.balanceParts(tiles, n(1), n(9), 1)));
  }

  @Test
  void c019TilesMergeUntilEachPartHoldsTheFloor() {
    List<SplitPoint> tiles =
        List.of(tile(2, 4), tile(4, 4), tile(6, 4), tile(8, 4), tile(10, 4), tile(11, 4));
    assertEquals(
        List.of(List.of(1L, 6L), List.of(7L, 12L)),
        values(RangePlanner.balanceParts(tiles, n(1), n(12), 10)));
  }

  @Test
  void c019ATailShortOfTheFloorJoinsThePartBefore() {
    List<SplitPoint> tiles = List.of(tile(2, 6), tile(4, 6), tile(6, 3));
    assertEquals(
        List.of(List.of(1L, 6L)), values(RangePlanner.balanceParts(tiles, n(1), n(6), 10)));
  }

  @Test
  void c019AFewThousandRowsStayOnePartUnderTheDefaultFloor() {
    List<SplitPoint> tiles = List.of(tile(2, 4000), tile(4, 4000), tile(6, 4000));
    assertEquals(
        List.of(List.of(1L, 6L)),
        values(
            RangePlanner.balanceParts(
                tiles, n(1), n(6), RangePlanner.DEFAULT_MIN_ROWS_PER_PARTITION)));
  }

  @Test
  void theOlderInstanceReadsBelowSAndTheNewerFromS() {
    List<CaptureInstance> both =
        List.of(instance("dbo_orders", 1L), instance("dbo_orders_v2", 50L));
    assertEquals(
        List.of(
            new InstanceRange("dbo_orders", n(10), n(49)),
            new InstanceRange("dbo_orders_v2", n(50), n(90))),
        RangePlanner.cutAtNewerInstances(both, n(10), n(90)));
  }

  @Test
  void aRangeBeforeSReadsOnlyTheOlderInstanceAndOneAfterOnlyTheNewer() {
    List<CaptureInstance> both =
        List.of(instance("dbo_orders", 1L), instance("dbo_orders_v2", 50L));
    assertEquals(
        List.of(new InstanceRange("dbo_orders", n(10), n(49))),
        RangePlanner.cutAtNewerInstances(both, n(10), n(49)));
    assertEquals(
        List.of(new InstanceRange("dbo_orders_v2", n(50), n(60))),
        RangePlanner.cutAtNewerInstances(both, n(50), n(60)));
  }

  @Test
  void aNewerInstanceWithoutAKnownStartIsNotRead() {
    List<CaptureInstance> both =
        List.of(instance("dbo_orders", 1L), instance("dbo_orders_v2", null));
    assertEquals(
        List.of(new InstanceRange("dbo_orders", n(10), n(90))),
        RangePlanner.cutAtNewerInstances(both, n(10), n(90)));
  }

  @Test
  void anInvertedIntervalPlansNothing() {
    assertEquals(
        List.of(),
        RangePlanner.cutAtNewerInstances(List.of(instance("dbo_orders", 1L)), n(10), n(9)));
  }
}
