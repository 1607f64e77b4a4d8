package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The simulator on an injected machine clock ({@link FakeSqlServer#open(Path, Clock)}): what it
 * stamps "now" and the time its readers tell, with no sleep.
 */
class MachineClockTest {
  @TempDir Path dir;

  private FakeSqlServer ordersOn(Clock clock) {
    FakeSqlServer db = FakeSqlServer.open(dir, clock);
    db.createTable(
        "dbo.orders", List.of(ColumnDefinition.of("order_id", "int")), List.of("order_id"));
    db.enableCdc("dbo.orders");
    return db;
  }

  @Test
  void aTransactionWithoutATimeCommitsAtTheMachineClockToTheMillisecond() throws Exception {
    ManualClock clock = new ManualClock(Instant.parse("2026-09-28T16:50:00.123456Z"));
    FakeSqlServer db = ordersOn(clock);
    Lsn first = db.transaction().insert("dbo.orders", Map.of("order_id", 1)).commit();
    clock.advance(Duration.ofMillis(1_100));
    Lsn second = db.transaction().insert("dbo.orders", Map.of("order_id", 2)).commit();
    try (CdcClient client = db.clientFactory().open()) {
      assertEquals(
          Instant.parse("2026-09-28T16:50:00.123Z"),
          client.commit(first).orElseThrow().commitTime());
      assertEquals(
          Instant.parse("2026-09-28T16:50:01.223Z"),
          client.commit(second).orElseThrow().commitTime());
    }
  }

  @Test
  void theReadersTellTheServersTimeByTheMachineClock() throws Exception {
    ManualClock clock = new ManualClock(Instant.parse("2026-09-28T16:50:00.500Z"));
    FakeSqlServer db = ordersOn(clock);
    db.transaction().insert("dbo.orders", Map.of("order_id", 1)).commit();
    // server.json was last written at 10:00:00 by the machine's clock; 90 s have passed since.
    Files.setLastModifiedTime(
        dir.resolve(FakeFormat.SERVER), FileTime.from(Instant.parse("2026-12-01T10:00:00Z")));
    clock.advanceTo(Instant.parse("2026-12-01T10:01:30Z"));
    try (CdcClient client = db.clientFactory().open()) {
      assertEquals(Optional.of(Instant.parse("2026-09-28T16:51:30.500Z")), client.currentTime());
      clock.advance(Duration.ofSeconds(30));
      assertEquals(Optional.of(Instant.parse("2026-09-28T16:52:00.500Z")), client.currentTime());
    }
  }

  @Test
  void theFactoryShipsItsClock() throws Exception {
    Clock fixed = Clock.fixed(Instant.parse("2026-09-28T16:50:00Z"), ZoneOffset.UTC);
    FakeCdcClientFactory factory = FakeCdcClientFactory.of(dir, fixed);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(factory);
    }
    Object copy;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = in.readObject();
    }
    assertEquals(factory, copy);
    assertNotEquals(FakeCdcClientFactory.of(dir), copy);
    assertEquals(FakeCdcClientFactory.of(dir), FakeSqlServer.open(dir).clientFactory());
  }

  @Test
  void aManualClockNeverGoesBack() {
    ManualClock clock = new ManualClock(Instant.parse("2026-09-28T16:50:00Z"));
    assertEquals(
        Instant.parse("2026-09-28T16:50:00Z"),
        clock.advanceTo(Instant.parse("2026-09-28T16:49:00Z")));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> clock.advance(Duration.ofSeconds(-1)));
    assertEquals("A clock only moves forward, not by PT-1S", e.getMessage());
  }
}
