package org.lakecdc.io.mssqlcdc.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** Where a new read starts (docs/options.md; docs/scenarios.md C006–C008). */
class StartingLsnTest {
  @TempDir Path dir;

  @Test
  void earliestStartsExactlyAtTheOldestInstancesMinimum() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    try (CdcClient client = db.openClient()) {
      assertEquals(lsn(0).decrement(), StartingLsn.earliest().lastProcessed(client, CI));
    }
  }

  @Test
  void c006LatestSkipsTheHistory() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    try (CdcClient client = db.openClient()) {
      assertEquals(lsn(2), StartingLsn.latest().lastProcessed(client, CI));
    }
  }

  @Test
  void c007LatestOnADatabaseWhoseCaptureNeverWroteStartsBeforeTheInstance() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.empty(), client.maxLsn());
      Lsn last = StartingLsn.latest().lastProcessed(client, CI);
      assertEquals(client.minLsn(CI).decrement(), last);
      assertTrue(last.isAfter(Lsn.ZERO));
    }
    Lsn first = commitOrders(db, 1).get(0);
    assertEquals(lsn(0), first);
  }

  @Test
  void c008LatestWithNeitherAMaxLsnNorAnInstanceStartAsksToRetry() {
    CdcClient client = FakeScenarios.neverCaptured();
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class, () -> StartingLsn.latest().lastProcessed(client, CI));
    assertTrue(e.getMessage().contains("retry once the capture job has run"), e.getMessage());
  }

  @Test
  void anExplicitLsnIsTakenAsAlreadyProcessed() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    try (CdcClient client = db.openClient()) {
      assertEquals(lsn(7), StartingLsn.parse("0x0000002a000001000071").lastProcessed(client, CI));
    }
  }

  @Test
  void startingLsnParsesItsThreeForms() {
    assertEquals(StartingLsn.earliest(), StartingLsn.parse(" Earliest "));
    assertEquals(StartingLsn.latest(), StartingLsn.parse("LATEST"));
    assertEquals(StartingLsn.after(lsn(0)), StartingLsn.parse(" 0x0000002a000001000001 "));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> StartingLsn.parse("soon"));
    assertEquals(
        "startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits such"
            + " as 0x0000002A000001000001, not 'soon'",
        e.getMessage());
    for (String shortLsn : List.of("0x0000", "2A000001000001", "0x2A000001000001")) {
      assertEquals(
          "startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits such"
              + " as 0x0000002A000001000001, not '"
              + shortLsn
              + "'",
          assertThrows(IllegalArgumentException.class, () -> StartingLsn.parse(shortLsn))
              .getMessage(),
          "a short LSN is refused, not padded");
    }
  }

  @Test
  void anExplicitLsnPastMaxLsnOrBeforeTheOldestChangeIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    db.cleanup(CI, lsn(1));
    try (CdcClient client = db.openClient()) {
      IllegalArgumentException past =
          assertThrows(
              IllegalArgumentException.class, () -> StartingLsn.checkExplicit(client, CI, lsn(5)));
      assertEquals(
          "startingLsn 0x0000002A000001000051 is after max_lsn 0x0000002A000001000021: nothing"
              + " has been captured there yet; use 'latest' to skip the history",
          past.getMessage());
      org.lakecdc.io.mssqlcdc.client.DataLossError before =
          assertThrows(
              org.lakecdc.io.mssqlcdc.client.DataLossError.class,
              () -> StartingLsn.checkExplicit(client, CI, Lsn.parse("0x01")));
      assertTrue(
          before
              .getMessage()
              .startsWith(
                  "startingLsn 0x00000000000000000001 is before the oldest change CDC holds for"
                      + " dbo_orders (min_lsn 0x0000002A000001000011)"),
          before.getMessage());
      StartingLsn.checkExplicit(client, CI, lsn(1).decrement());
      StartingLsn.checkExplicit(client, CI, lsn(2));
    }
  }
}
