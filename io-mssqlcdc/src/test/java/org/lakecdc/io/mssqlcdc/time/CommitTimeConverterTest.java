package org.lakecdc.io.mssqlcdc.time;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/sql-server.md "Connection settings": server-local commit times to UTC, with exact values.
 */
class CommitTimeConverterTest {
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId SAO_PAULO = ZoneId.of("America/Sao_Paulo");

  private static LocalDateTime local(String iso) {
    return LocalDateTime.parse(iso);
  }

  private static Instant utc(String iso) {
    return Instant.parse(iso);
  }

  @Test
  void utcPassesTheLocalTimeThrough() {
    assertEquals(
        List.of(utc("2026-09-28T13:50:00Z"), utc("2026-09-28T13:51:00.123Z")),
        CommitTimeConverter.utc()
            .toUtc(List.of(local("2026-09-28T13:50:00"), local("2026-09-28T13:51:00.123"))));
  }

  @Test
  void truncatesBelowMilliseconds() {
    assertEquals(
        utc("2026-09-28T13:50:01.123Z"),
        CommitTimeConverter.utc().toUtcWithoutContext(local("2026-09-28T13:50:01.1239999")));
  }

  @Test
  void fixedOffsetSubtractsTheOffset() {
    assertEquals(
        List.of(utc("2026-09-28T13:50:00Z")),
        CommitTimeConverter.fixedOffsetMinutes(-180).toUtc(List.of(local("2026-09-28T10:50:00"))));
  }

  @Test
  void fixedOffsetIsNamedLikeTheReference() {
    assertEquals("UTC-03:00", CommitTimeConverter.fixedOffsetMinutes(-180).toString());
    assertEquals("UTC+05:30", CommitTimeConverter.fixedOffsetMinutes(330).toString());
  }

  @Test
  void fixedOffsetBeyondFourteenHoursIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> CommitTimeConverter.fixedOffsetMinutes(841));
    assertEquals("UTC offset must be within ±840 minutes (14 hours), got 841", e.getMessage());
  }

  @Test
  void saoPauloIsUtcMinusThreeAllYear() {
    CommitTimeConverter clock = CommitTimeConverter.named(SAO_PAULO);
    assertEquals(
        List.of(utc("2026-09-28T13:50:00Z"), utc("2026-01-15T13:00:00Z")),
        clock.toUtc(List.of(local("2026-09-28T10:50:00"), local("2026-01-15T10:00:00"))));
  }

  @Test
  void fallBackSecondPassReadsTheLaterOffsetAndNeverGoesBackwards() {
    // UTC 05:30, 05:50, 06:10, 06:30 on 2026-11-01 are stored as 01:30, 01:50, 01:10, 01:30.
    List<LocalDateTime> stored =
        List.of(
            local("2026-11-01T01:30:00"),
            local("2026-11-01T01:50:00"),
            local("2026-11-01T01:10:00"),
            local("2026-11-01T01:30:00"));
    assertEquals(
        List.of(
            utc("2026-11-01T05:30:00Z"),
            utc("2026-11-01T05:50:00Z"),
            utc("2026-11-01T06:10:00Z"),
            utc("2026-11-01T06:30:00Z")),
        CommitTimeConverter.named(NEW_YORK).toUtc(stored));
  }

  @Test
  void repeatedTimeWithoutADropReadsTheFirstPass() {
    assertEquals(
        List.of(utc("2026-11-01T05:30:00Z")),
        CommitTimeConverter.named(NEW_YORK).toUtc(List.of(local("2026-11-01T01:30:00"))));
  }

  @Test
  void dropOfOneMinuteOrLessIsNotTheFallBack() {
    assertEquals(
        List.of(utc("2026-11-01T05:50:00Z"), utc("2026-11-01T05:49:00Z")),
        CommitTimeConverter.named(NEW_YORK)
            .toUtc(List.of(local("2026-11-01T01:50:00"), local("2026-11-01T01:49:00"))));
  }

  @Test
  void dropOutsideTheRepeatedHourIsNotTheFallBack() {
    // 2026-10-31 is summer time in New York: a clock that goes back there is not the fall-back.
    assertEquals(
        List.of(utc("2026-10-31T14:00:00Z"), utc("2026-10-31T13:30:00Z")),
        CommitTimeConverter.named(NEW_YORK)
            .toUtc(List.of(local("2026-10-31T10:00:00"), local("2026-10-31T09:30:00"))));
  }

  @Test
  void commitsAfterTheRepeatedHourKeepTheirOnlyOffset() {
    assertEquals(
        List.of(
            utc("2026-11-01T05:50:00Z"),
            utc("2026-11-01T06:10:00Z"),
            utc("2026-11-01T07:30:00Z"),
            utc("2026-11-01T10:00:00Z")),
        CommitTimeConverter.named(NEW_YORK)
            .toUtc(
                List.of(
                    local("2026-11-01T01:50:00"),
                    local("2026-11-01T01:10:00"),
                    local("2026-11-01T02:30:00"),
                    local("2026-11-01T05:00:00"))));
  }

  @Test
  void springForwardGapMovesForwardByTheGap() {
    // 02:30 does not exist on 2026-03-08 in New York: AT TIME ZONE reads it as 03:30 EDT.
    assertEquals(
        List.of(utc("2026-03-08T07:30:00Z")),
        CommitTimeConverter.named(NEW_YORK).toUtc(List.of(local("2026-03-08T02:30:00"))));
  }

  @Test
  void easternTimeValuesOfScenarioC245ConvertBackToUtc() {
    CommitTimeConverter clock = CommitTimeConverter.named(NEW_YORK);
    assertEquals(
        utc("2026-11-01T04:45:00Z"), clock.toUtcWithoutContext(local("2026-11-01T00:45:00")));
    assertEquals(
        utc("2026-03-08T06:30:00Z"), clock.toUtcWithoutContext(local("2026-03-08T01:30:00")));
    assertEquals(
        utc("2026-07-01T12:00:00Z"), clock.toUtcWithoutContext(local("2026-07-01T08:00:00")));
    // The second 01:30 of 2026-11-01, after the clock went back, is 06:30Z.
    assertEquals(
        List.of(utc("2026-11-01T05:45:00Z"), utc("2026-11-01T06:30:00Z")),
        clock.toUtc(List.of(local("2026-11-01T01:45:00"), local("2026-11-01T01:30:00"))));
  }

  @Test
  void c245ServerClockOfALookUpByTimeInEasternTimeStaysBeforeTheRepeatedHour() {
    CommitTimeConverter clock = CommitTimeConverter.named(NEW_YORK);
    // 01:45 EDT, the first pass: an hour earlier than the wall time, so that no commit of the
    // second pass (01:00 to 01:45 EST, later instants) is at or before it.
    assertEquals(
        local("2026-11-01T00:45:00"), clock.serverTimeAtOrBefore(utc("2026-11-01T05:45:00Z")));
    // The second 01:30 (EST).
    assertEquals(
        local("2026-11-01T01:30:00"), clock.serverTimeAtOrBefore(utc("2026-11-01T06:30:00Z")));
    // Before the spring-forward gap: the wall time.
    assertEquals(
        local("2026-03-08T01:30:00"), clock.serverTimeAtOrBefore(utc("2026-03-08T06:30:00Z")));
    assertEquals(
        local("2026-07-01T08:00:00"), clock.serverTimeAtOrBefore(utc("2026-07-01T12:00:00Z")));
  }

  @Test
  void aLookUpByTimeNeverReadsACommitOfTheSecondPassBeforeTheInstant() {
    CommitTimeConverter clock = CommitTimeConverter.named(NEW_YORK);
    // Every first-pass instant of the hour before the fall-back reads below 01:00, where every
    // second-pass commit (06:00Z to 07:00Z) reads 01:00 or later; from 06:00Z on it is the EST
    // wall time.
    for (int minute = 0; minute < 60; minute += 5) {
      Instant firstPass = utc("2026-11-01T05:00:00Z").plusSeconds(60L * minute);
      assertEquals(
          clock.toServerLocal(firstPass).minusHours(1), clock.serverTimeAtOrBefore(firstPass));
      Instant secondPass = firstPass.plusSeconds(3600);
      assertEquals(clock.toServerLocal(secondPass), clock.serverTimeAtOrBefore(secondPass));
    }
    assertEquals(
        local("2026-11-01T00:59:59"), clock.serverTimeAtOrBefore(utc("2026-11-01T05:59:59.999Z")));
    assertEquals(
        local("2026-11-01T01:00:00"), clock.serverTimeAtOrBefore(utc("2026-11-01T06:00:00Z")));
    // An hour before the fall-back hour, nothing changes.
    assertEquals(
        local("2026-11-01T00:59:59"), clock.serverTimeAtOrBefore(utc("2026-11-01T04:59:59Z")));
  }

  @Test
  void aLookUpByTimeTruncatesToSecondsOnEveryClock() {
    assertEquals(
        local("2026-09-28T16:50:00"),
        CommitTimeConverter.utc().serverTimeAtOrBefore(utc("2026-09-28T16:50:00.999Z")));
    assertEquals(
        local("2026-09-28T13:50:00"),
        CommitTimeConverter.fixedOffsetMinutes(-180)
            .serverTimeAtOrBefore(utc("2026-09-28T16:50:00.999Z")));
    assertEquals(
        local("2026-09-28T13:50:00"),
        CommitTimeConverter.named(SAO_PAULO).serverTimeAtOrBefore(utc("2026-09-28T16:50:00.999Z")));
    assertEquals(
        utc("2026-09-28T16:50:00Z"),
        CommitTimeConverter.lookupSecond(utc("2026-09-28T16:50:00.999Z")));
  }

  @Test
  void aLookUpByTimeOutsideSqlServersDatetimeRangeIsRefused() {
    CommitTimeConverter clock = CommitTimeConverter.named(NEW_YORK);
    assertEquals(
        local("1753-01-02T00:00:00"),
        CommitTimeConverter.utc().serverTimeAtOrBefore(CommitTimeConverter.EARLIEST_LOOKUP));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> clock.serverTimeAtOrBefore(utc("1753-01-01T23:59:59Z")));
    assertEquals(
        "A commit look-up by time needs an instant between 1753-01-02T00:00:00Z and"
            + " 9999-12-30T00:00:00Z (SQL Server's datetime range), got 1753-01-01T23:59:59Z",
        e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> CommitTimeConverter.lookupSecond(utc("9999-12-30T00:00:01Z")));
    assertThrows(NullPointerException.class, () -> CommitTimeConverter.lookupSecond(null));
  }

  @Test
  void serverLocalIsTheWallClockOfTheZone() {
    CommitTimeConverter clock = CommitTimeConverter.named(NEW_YORK);
    assertEquals(local("2026-11-01T01:10:00"), clock.toServerLocal(utc("2026-11-01T06:10:00Z")));
    assertEquals(local("2026-11-01T01:50:00"), clock.toServerLocal(utc("2026-11-01T05:50:00Z")));
    assertEquals(
        local("2026-09-28T10:50:00.123"),
        CommitTimeConverter.fixedOffsetMinutes(-180)
            .toServerLocal(utc("2026-09-28T13:50:00.123456Z")));
  }

  @Test
  void survivesJavaSerialization() throws Exception {
    CommitTimeConverter clock = CommitTimeConverter.named(NEW_YORK);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(clock);
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      assertEquals(clock, in.readObject());
    }
  }
}
