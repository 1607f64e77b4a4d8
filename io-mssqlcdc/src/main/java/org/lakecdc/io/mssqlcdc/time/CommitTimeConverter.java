package org.lakecdc.io.mssqlcdc.time;

import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Converts SQL Server commit times ({@code cdc.lsn_time_mapping.tran_end_time}, a zone-less local
 * time on the server's clock) to UTC instants, as docs/sql-server.md "Connection settings"
 * describes.
 *
 * <p>Three clocks:
 *
 * <ul>
 *   <li>{@link #utc()}: the server runs on UTC; the local time is the UTC time.
 *   <li>{@link #fixedOffsetMinutes(int)}: the pre-2022 fallback; {@code utc = local - offset}.
 *       Exact only for zones without daylight saving.
 *   <li>{@link #named(ZoneId)}: a named zone. Each local time is read the way T-SQL's {@code t AT
 *       TIME ZONE zone} reads it (a time in a spring-forward gap moves forward by the gap and takes
 *       the offset after it; a time the fall-back repeats takes the offset <em>before</em> the
 *       change, i.e. its first pass), corrected for the fall-back repeated hour by LSN order:
 * </ul>
 *
 * <p><b>The fall-back rule</b> (docs/sql-server.md "Connection settings"). {@code AT TIME ZONE}
 * reads every repeated local time as its first pass, so commits made in the hour's second pass
 * would come out an hour early and go backwards in LSN order. Given the commit times <em>in LSN
 * order</em>:
 *
 * <ol>
 *   <li>A commit is a <em>drop</em> when its local time reads more than one minute earlier than the
 *       local time of the commit right before it (in LSN order) and it is a time the fall-back
 *       repeats ({@link ZoneOffsetTransition#isOverlap()}).
 *   <li>A commit reads the repeated hour's second pass when some drop at or before it in LSN order
 *       reads less than 3 hours earlier than it (local times): the drop itself and the commits
 *       after it within 3 hours. Such a commit takes the offset in force 3 hours after its local
 *       time, which for a repeated time is the transition's later offset ({@link
 *       ZoneOffsetTransition#getOffsetAfter()}).
 *   <li>Every other commit keeps the {@code AT TIME ZONE} reading.
 * </ol>
 *
 * <p>So with America/New_York on 2026-11-01, commits at 05:30Z, 05:50Z, 06:10Z and 06:30Z are
 * stored as 01:30, 01:50, 01:10 and 01:30 and convert back to exactly those instants; a lone 01:30
 * with no drop before it reads 05:30Z. Not handled (as in the reference): once cleanup has deleted
 * the mapping rows around the drop, or when no commit happened in the hour before the change,
 * second-pass commits read an hour early. Results are truncated to milliseconds, like {@code
 * datetime2(3)}.
 *
 * <p>Immutable and serializable, so a planned range can carry its clock to a worker.
 */
public final class CommitTimeConverter implements Serializable {
  /** Serial form version. */
  private static final long serialVersionUID = 1L;

  /** How far a drop's influence reaches, and how far ahead the second-pass offset is read. */
  static final Duration LOOK_BACK = Duration.ofHours(3);

  /** A clock reading must go back by more than this to count as the fall-back. */
  static final Duration DROP_THRESHOLD = Duration.ofMinutes(1);

  /**
   * How far ahead a look-up by time reads the zone to stay before a fall-back's repeated hour
   * ({@link #serverTimeAtOrBefore(Instant)}): the hour the T-SQL client adds with {@code
   * DATEADD(hour, 1, ...)} and takes away again.
   */
  static final Duration LOOKUP_FALL_BACK = Duration.ofHours(1);

  /**
   * The earliest instant a look-up by time accepts: SQL Server's {@code datetime} starts at
   * 1753-01-01; a day later, no zone offset leaves its range.
   */
  public static final Instant EARLIEST_LOOKUP = Instant.parse("1753-01-02T00:00:00Z");

  /**
   * The latest instant a look-up by time accepts: SQL Server's {@code datetime} ends at 9999-12-31;
   * a day earlier, no zone offset (nor the added hour) leaves its range.
   */
  public static final Instant LATEST_LOOKUP = Instant.parse("9999-12-30T00:00:00Z");

  /** The largest UTC offset in use, in minutes: 14 hours. */
  private static final int MAX_OFFSET_MINUTES = 14 * 60;

  private enum Kind {
    UTC,
    FIXED_OFFSET,
    NAMED
  }

  private static final CommitTimeConverter UTC_CONVERTER =
      new CommitTimeConverter(Kind.UTC, null, 0);

  /** Which clock. */
  private final Kind kind;

  /** The named zone; null unless {@link Kind#NAMED}. */
  private final ZoneId zone;

  /** Minutes east of UTC; 0 unless {@link Kind#FIXED_OFFSET}. */
  private final int offsetMinutes;

  private CommitTimeConverter(Kind kind, ZoneId zone, int offsetMinutes) {
    this.kind = kind;
    this.zone = zone;
    this.offsetMinutes = offsetMinutes;
  }

  /**
   * A server whose clock is UTC: local times are UTC times (no {@code AT TIME ZONE}).
   *
   * @return the UTC clock
   */
  public static CommitTimeConverter utc() {
    return UTC_CONVERTER;
  }

  /**
   * A server in a named zone, converted per commit with the LSN-order fall-back rule of the class
   * Javadoc.
   *
   * @param zone the server's zone as an IANA id (the simulator's {@code time_zone}; the T-SQL
   *     client converts on the server with {@code AT TIME ZONE} instead)
   * @return the clock of that zone
   * @throws NullPointerException when {@code zone} is null
   */
  public static CommitTimeConverter named(ZoneId zone) {
    Objects.requireNonNull(zone, "zone");
    return new CommitTimeConverter(Kind.NAMED, zone, 0);
  }

  /**
   * The pre-2022 fallback: one fixed offset, {@code utc = local - offsetMinutes}.
   *
   * @param offsetMinutes minutes east of UTC, as {@code DATEPART(TZOFFSET, SYSDATETIMEOFFSET())}
   *     returns them (-180 for UTC-03:00)
   * @return the fixed-offset clock
   * @throws IllegalArgumentException when the offset is outside [-840, 840] (±14 hours)
   */
  public static CommitTimeConverter fixedOffsetMinutes(int offsetMinutes) {
    if (offsetMinutes < -MAX_OFFSET_MINUTES || offsetMinutes > MAX_OFFSET_MINUTES) {
      throw new IllegalArgumentException(
          "UTC offset must be within ±840 minutes (14 hours), got " + offsetMinutes);
    }
    return new CommitTimeConverter(Kind.FIXED_OFFSET, null, offsetMinutes);
  }

  /**
   * The named zone.
   *
   * @return the zone, or empty for {@link #utc()} and fixed offsets
   */
  public Optional<ZoneId> zone() {
    return Optional.ofNullable(zone);
  }

  /**
   * The fixed offset.
   *
   * @return minutes east of UTC, or empty unless this is a fixed-offset clock
   */
  public OptionalInt fixedOffset() {
    return kind == Kind.FIXED_OFFSET ? OptionalInt.of(offsetMinutes) : OptionalInt.empty();
  }

  /**
   * Converts server-local commit times to UTC.
   *
   * @param localTimesInLsnOrder {@code tran_end_time} values in the LSN order of their mapping rows
   *     (the order matters for the fall-back rule); no nulls
   * @return one UTC instant per input, same order, truncated to milliseconds
   * @throws NullPointerException when the list or an element is null
   */
  public List<Instant> toUtc(List<LocalDateTime> localTimesInLsnOrder) {
    List<Instant> out = new ArrayList<>(localTimesInLsnOrder.size());
    if (kind != Kind.NAMED) {
      for (LocalDateTime t : localTimesInLsnOrder) {
        out.add(toUtcWithoutContext(t));
      }
      return out;
    }
    ZoneRules rules = zone.getRules();
    List<Integer> drops = new ArrayList<>();
    LocalDateTime previous = null;
    for (int i = 0; i < localTimesInLsnOrder.size(); i++) {
      LocalDateTime t = Objects.requireNonNull(localTimesInLsnOrder.get(i), "local time");
      if (previous != null && t.isBefore(previous.minus(DROP_THRESHOLD)) && isRepeated(rules, t)) {
        drops.add(i);
      }
      out.add(
          readsSecondPass(localTimesInLsnOrder, drops, t) ? secondPass(rules, t) : atTimeZone(t));
      previous = t;
    }
    return out;
  }

  /**
   * Converts one local time without its neighbours: {@code AT TIME ZONE} for a named zone (a
   * repeated time reads its first pass), the offset for a fixed offset, the value itself for UTC.
   * Use {@link #toUtc(List)} for commit times, which need their LSN-order neighbours.
   *
   * @param localTime a server-local time
   * @return the UTC instant, truncated to milliseconds
   */
  public Instant toUtcWithoutContext(LocalDateTime localTime) {
    Objects.requireNonNull(localTime, "localTime");
    switch (kind) {
      case UTC:
        return localTime.toInstant(ZoneOffset.UTC).truncatedTo(ChronoUnit.MILLIS);
      case FIXED_OFFSET:
        return localTime
            .minusMinutes(offsetMinutes)
            .toInstant(ZoneOffset.UTC)
            .truncatedTo(ChronoUnit.MILLIS);
      default:
        return atTimeZone(localTime);
    }
  }

  /**
   * The server's wall clock at a UTC instant: what SQL Server stores as {@code tran_end_time} for a
   * commit at {@code utc} (for a fixed offset, {@code utc + offset}).
   *
   * @param utc a UTC instant
   * @return the server-local time, truncated to milliseconds
   */
  public LocalDateTime toServerLocal(Instant utc) {
    Objects.requireNonNull(utc, "utc");
    Instant ms = utc.truncatedTo(ChronoUnit.MILLIS);
    switch (kind) {
      case UTC:
        return LocalDateTime.ofInstant(ms, ZoneOffset.UTC);
      case FIXED_OFFSET:
        return LocalDateTime.ofInstant(ms, ZoneOffset.ofTotalSeconds(offsetMinutes * 60));
      default:
        return LocalDateTime.ofInstant(ms, zone);
    }
  }

  /**
   * The server-clock time to compare {@code tran_end_time} with when looking for the commits at or
   * before a UTC instant: the Java twin of the expression the T-SQL client passes to {@code
   * sys.fn_cdc_map_time_to_lsn('largest less than or equal', ...)} (docs/options.md "Seeding from a
   * copy", docs/scenarios.md C240, C245), used by the simulator and checked against SQL Server's
   * own answers.
   *
   * <p>The instant is first truncated to whole seconds ({@link #lookupSecond(Instant)}). Then:
   *
   * <ul>
   *   <li>UTC: the UTC wall time itself.
   *   <li>Fixed offset: the UTC wall time plus the offset ({@code DATEADD(minute, offset, t)}).
   *   <li>Named zone: the earlier of the zone's wall time at t and the zone's wall time at t + 1
   *       hour, minus 1 hour. The second is the earlier one only in the hour before a
   *       daylight-saving fall-back, by the hour the clock goes back: a commit made in the repeated
   *       hour's second pass (a later instant) reads a local time that can be earlier than t's
   *       first-pass reading, and comparing with that reading would count it. Taking the earlier
   *       value excludes every later commit; in exchange, first-pass commits of the last hour
   *       before t may be missed (every approximation goes earlier). Before a spring-forward the
   *       second reading is the later one, so the zone's wall time at t is used, as everywhere
   *       else. This holds for fall-backs of up to one hour, the only ones in use.
   * </ul>
   *
   * <p>With America/New_York (Windows {@code Eastern Standard Time}): 2026-11-01T05:45Z gives
   * 2026-11-01T00:45, 06:30Z gives 01:30 (the second 01:30), 2026-03-08T06:30Z gives 01:30 and
   * 2026-07-01T12:00Z gives 08:00.
   *
   * @param utc the UTC instant; fractions of a second are ignored
   * @return the server-clock time, a whole second, at or before the server's reading of {@code utc}
   * @throws IllegalArgumentException when {@code utc} is outside SQL Server's {@code datetime}
   *     range ({@link #lookupSecond(Instant)})
   */
  public LocalDateTime serverTimeAtOrBefore(Instant utc) {
    Instant t = lookupSecond(utc);
    LocalDateTime at = toServerLocal(t);
    if (kind != Kind.NAMED) {
      return at;
    }
    LocalDateTime hourLaterMinusHour =
        toServerLocal(t.plus(LOOKUP_FALL_BACK)).minus(LOOKUP_FALL_BACK);
    return hourLaterMinusHour.isBefore(at) ? hourLaterMinusHour : at;
  }

  /**
   * A UTC instant as a commit look-up by time takes it: truncated to whole seconds, and within the
   * range SQL Server's {@code datetime} can hold on any server clock ({@code tracking_time} of
   * {@code sys.fn_cdc_map_time_to_lsn} is a {@code datetime}: 1753-01-01 to 9999-12-31, less a day
   * either side for the zone offset).
   *
   * @param utc the UTC instant
   * @return {@code utc} truncated to seconds
   * @throws IllegalArgumentException when {@code utc} is before {@link #EARLIEST_LOOKUP} or after
   *     {@link #LATEST_LOOKUP}
   * @throws NullPointerException when {@code utc} is null
   */
  public static Instant lookupSecond(Instant utc) {
    Objects.requireNonNull(utc, "utc");
    if (utc.isBefore(EARLIEST_LOOKUP) || utc.isAfter(LATEST_LOOKUP)) {
      throw new IllegalArgumentException(
          "A commit look-up by time needs an instant between "
              + EARLIEST_LOOKUP
              + " and "
              + LATEST_LOOKUP
              + " (SQL Server's datetime range), got "
              + utc);
    }
    return utc.truncatedTo(ChronoUnit.SECONDS);
  }

  private static boolean isRepeated(ZoneRules rules, LocalDateTime t) {
    ZoneOffsetTransition transition = rules.getTransition(t);
    return transition != null && transition.isOverlap();
  }

  /** True when a drop at or before this commit (in LSN order) reads less than 3 hours earlier. */
  private static boolean readsSecondPass(
      List<LocalDateTime> times, List<Integer> drops, LocalDateTime t) {
    LocalDateTime limit = t.minus(LOOK_BACK);
    for (int d = drops.size() - 1; d >= 0; d--) {
      if (times.get(drops.get(d)).isAfter(limit)) {
        return true;
      }
    }
    return false;
  }

  /** The offset in force 3 hours after the local time: a repeated time's later offset. */
  private static Instant secondPass(ZoneRules rules, LocalDateTime t) {
    ZoneOffset later = rules.getOffset(t.plus(LOOK_BACK));
    return t.toInstant(later).truncatedTo(ChronoUnit.MILLIS);
  }

  /** T-SQL {@code (t AT TIME ZONE zone) AT TIME ZONE 'UTC'}. */
  private Instant atTimeZone(LocalDateTime t) {
    // ZonedDateTime.ofLocal without a preferred offset reads an overlap with the earlier offset
    // (the offset before the change) and moves a time in a gap forward by the gap, taking the
    // later offset: the two rules AT TIME ZONE documents.
    return ZonedDateTime.ofLocal(t, zone, null).toInstant().truncatedTo(ChronoUnit.MILLIS);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof CommitTimeConverter)) {
      return false;
    }
    CommitTimeConverter other = (CommitTimeConverter) o;
    return kind == other.kind
        && offsetMinutes == other.offsetMinutes
        && Objects.equals(zone, other.zone);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, zone, offsetMinutes);
  }

  /**
   * The clock's name, as the reference system reports it.
   *
   * @return {@code UTC}, the zone id, or the fixed offset as {@code UTC-03:00}
   */
  @Override
  public String toString() {
    switch (kind) {
      case UTC:
        return "UTC";
      case FIXED_OFFSET:
        int abs = Math.abs(offsetMinutes);
        return String.format("UTC%s%02d:%02d", offsetMinutes < 0 ? "-" : "+", abs / 60, abs % 60);
      default:
        return zone.getId();
    }
  }

  /**
   * Keeps {@link #utc()} a singleton across serialization.
   *
   * @return the shared UTC instance, or this
   */
  private Object readResolve() {
    return kind == Kind.UTC ? UTC_CONVERTER : this;
  }
}
