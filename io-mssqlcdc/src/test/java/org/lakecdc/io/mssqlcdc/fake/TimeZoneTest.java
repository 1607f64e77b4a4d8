package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Commit times on a non-UTC server: stored server-local, read back as UTC (docs/sql-server.md
 * "Connection settings").
 */
class TimeZoneTest {
  private static final List<Instant> ACROSS_FALL_BACK =
      List.of(
          Instant.parse("2026-11-01T05:30:00Z"),
          Instant.parse("2026-11-01T05:50:00Z"),
          Instant.parse("2026-11-01T06:10:00Z"),
          Instant.parse("2026-11-01T06:30:00Z"));

  @TempDir Path dir;

  private List<String> storedEndTimes() {
    List<String> out = new ArrayList<>();
    for (JsonNode n : FakeFormat.readAll(dir.resolve("cdc.lsn_time_mapping.jsonl"))) {
      out.add(n.get("tran_end_time").asText());
    }
    return out;
  }

  private List<Lsn> commitAcrossFallBack(FakeSqlServer db) {
    List<Lsn> out = new ArrayList<>();
    for (int i = 0; i < ACROSS_FALL_BACK.size(); i++) {
      out.add(insertOrder(db, ACROSS_FALL_BACK.get(i), i, "new", "1.00"));
    }
    return out;
  }

  @Test
  void newYorkServerStoresTheRepeatedHourAsLocalTime() {
    FakeSqlServer db = FakeScenarios.orders(dir).timeZone(ZoneId.of("America/New_York"));
    commitAcrossFallBack(db);
    assertEquals(
        List.of(
            "2026-11-01T01:30:00.000",
            "2026-11-01T01:50:00.000",
            "2026-11-01T01:10:00.000",
            "2026-11-01T01:30:00.000"),
        storedEndTimes());
  }

  @Test
  void newYorkServerReadsCommitsAcrossTheFallBackAtTheirUtcInstants() {
    FakeSqlServer db = FakeScenarios.orders(dir).timeZone(ZoneId.of("America/New_York"));
    List<Lsn> lsns = commitAcrossFallBack(db);
    try (CdcClient client = db.openClient()) {
      List<Instant> commits = new ArrayList<>();
      for (Lsn l : lsns) {
        commits.add(client.commit(l).orElseThrow().commitTime());
      }
      assertEquals(ACROSS_FALL_BACK, commits);
    }
  }

  @Test
  void changeRowsCarryTheSameCommitTimesAsTheMapping() {
    FakeSqlServer db = FakeScenarios.orders(dir).timeZone(ZoneId.of("America/New_York"));
    commitAcrossFallBack(db);
    try (CdcClient client = db.openClient()) {
      assertEquals(
          ACROSS_FALL_BACK,
          FakeScenarios.readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX).stream()
              .map(ChangeRow::commitTime)
              .toList());
    }
  }

  @Test
  void c245LookUpsByTimeNeverIncludeALaterCommitOfTheRepeatedHour() {
    FakeSqlServer db = FakeScenarios.orders(dir).timeZone(ZoneId.of("America/New_York"));
    Lsn midnight = insertOrder(db, Instant.parse("2026-11-01T04:00:00Z"), 9, "new", "1.00");
    List<Lsn> l = commitAcrossFallBack(db); // 01:30 EDT, 01:50 EDT, 01:10 EST, 01:30 EST
    try (CdcClient client = db.openClient()) {
      // 01:55 EDT reads 00:55: the 01:10 EST commit (06:10Z, after the instant) is left out, and
      // so, conservatively, are the first-pass commits of the last hour.
      assertEquals(
          Optional.of(midnight),
          client.lastCommitLsnAtOrBefore(Instant.parse("2026-11-01T05:55:00Z")));
      // 01:20 EST: the largest LSN at or before 01:20 is the second-pass 01:10.
      assertEquals(
          Optional.of(l.get(2)),
          client.lastCommitLsnAtOrBefore(Instant.parse("2026-11-01T06:20:00Z")));
      assertEquals(
          Optional.of(l.get(3)),
          client.lastCommitLsnAtOrBefore(Instant.parse("2026-11-01T06:30:00.999Z")));
      assertEquals(
          Optional.of(midnight),
          client.lastCommitLsnAtOrBefore(Instant.parse("2026-11-01T04:00:00Z")));
      assertEquals(
          Optional.empty(),
          client.lastCommitLsnAtOrBefore(Instant.parse("2026-11-01T03:59:59.999Z")));
    }
  }

  @Test
  void saoPauloServerStoresUtcMinusThree() {
    FakeSqlServer db = FakeScenarios.orders(dir).timeZone(ZoneId.of("America/Sao_Paulo"));
    Lsn l0 = insertOrder(db, T0, 1, "new", "1.00");
    assertEquals(List.of("2026-09-28T10:50:00.000"), storedEndTimes());
    try (CdcClient client = db.openClient()) {
      assertEquals(T0, client.commit(l0).orElseThrow().commitTime());
    }
  }

  @Test
  void commitTimesKeepMillisecondsOnly() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0.plusNanos(123_456_789), 1, "new", "1.00");
    assertEquals(List.of("2026-09-28T13:50:00.123"), storedEndTimes());
    try (CdcClient client = db.openClient()) {
      assertEquals(
          Instant.parse("2026-09-28T13:50:00.123Z"), client.commit(l0).orElseThrow().commitTime());
    }
  }

  @Test
  void theZoneSurvivesReopening() {
    FakeScenarios.orders(dir).timeZone(ZoneId.of("America/Sao_Paulo"));
    assertEquals(ZoneId.of("America/Sao_Paulo"), FakeSqlServer.open(dir).timeZone());
  }
}
