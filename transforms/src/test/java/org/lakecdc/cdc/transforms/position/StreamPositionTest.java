package org.lakecdc.cdc.transforms.position;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.lakecdc.mssqlcdc.lsn.Lsn;

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
}
