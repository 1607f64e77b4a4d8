package org.lakecdc.transforms.position;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** The stored stream position keeps every key (C139) and parses what it writes. */
class StreamPositionTest {
  @Test
  void c139TheJsonFormKeepsEveryKeyAndRoundTrips() {
    StreamPosition p =
        new StreamPosition(
            "orders-v1",
            0,
            7,
            Lsn.parse("0x0000002A000001F00003"),
            Instant.parse("2026-09-28T14:03:12.117Z"),
            "dbo_orders");
    assertEquals(
        "{\"end_lsn\":\"0x0000002A000001F00003\",\"end_commit_ts\":\"2026-09-28T14:03:12.117Z\","
            + "\"batch_id\":7,\"generation\":0,\"app_id\":\"orders-v1\","
            + "\"capture_instance\":\"dbo_orders\"}",
        p.toJson());
    assertEquals(p, StreamPosition.fromJson(p.toJson()));
    StreamPosition noTime = new StreamPosition("a", 1, -1, Lsn.parse("0x01"), null, "dbo_orders");
    assertEquals(noTime, StreamPosition.fromJson(noTime.toJson()));
  }

  @Test
  void readersIgnoreKeysAddedLaterAndRefuseWhatIsNotAPosition() {
    assertEquals(
        3,
        StreamPosition.fromJson(
                "{\"end_lsn\":\"0x01\",\"batch_id\":3,\"app_id\":\"a\",\"future_key\":true}")
            .batchId());
    assertThrows(IllegalArgumentException.class, () -> StreamPosition.fromJson("{\"x\":1}"));
  }

  @Test
  void aPositionOfATargetNamesItsTableAndIsOnlyThatTablesOwn() {
    StreamPosition legacy =
        new StreamPosition(
            "dbo_orders", 0, 2, Lsn.parse("0x0000002A0000010000A1"), null, "dbo_orders");
    StreamPosition own = legacy.ofTarget("/lake/dbo_orders", "0c75dd29");
    assertEquals(
        "{\"end_lsn\":\"0x0000002A0000010000A1\",\"end_commit_ts\":null,\"batch_id\":2,"
            + "\"generation\":0,\"app_id\":\"dbo_orders\",\"capture_instance\":\"dbo_orders\","
            + "\"target\":\"/lake/dbo_orders\",\"target_id\":\"0c75dd29\"}",
        own.toJson());
    assertEquals(own, StreamPosition.fromJson(own.toJson()));
    StreamPosition next = own.next(3, Lsn.parse("0x0000002A0000010000B0"), null, "dbo_orders");
    assertEquals("/lake/dbo_orders", next.target(), "the next batch's position keeps its target");
    assertEquals("0c75dd29", next.targetId());
    assertEquals(true, own.isOf("dbo_orders", "0c75dd29"));
    assertEquals(false, own.isOf("dbo_orders", "9d1e0000"), "a new table at the same path");
    assertEquals(false, own.isOf("dbo_lineitem", "0c75dd29"));
    assertEquals(false, legacy.isOf("dbo_orders", "0c75dd29"), "a legacy position names no table");
    assertEquals("dbo_orders#facts@0c75dd29", own.factsAppId());
    assertEquals("dbo_orders#events@0c75dd29", own.eventsAppId());
    assertEquals("dbo_orders#facts", legacy.factsAppId());
    assertEquals("dbo_orders#events", legacy.eventsAppId());
  }
}
