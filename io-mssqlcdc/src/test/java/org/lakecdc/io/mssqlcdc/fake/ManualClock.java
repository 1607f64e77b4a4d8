package org.lakecdc.io.mssqlcdc.fake;

import java.io.Serializable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock a test moves by hand, for {@link FakeSqlServer#open(java.nio.file.Path, Clock)}: it
 * stands still at its time until {@link #advance} or {@link #advanceTo} moves it, never backwards.
 * Clocks made from it by {@link #withZone} share its time. Serializable, as a clock a factory ships
 * must be; a copy made by serialization keeps its own time from then on.
 */
public final class ManualClock extends Clock implements Serializable {
  private static final long serialVersionUID = 1L;

  private final AtomicReference<Instant> now;
  private final ZoneId zone;

  /**
   * A clock at {@code start}, in UTC.
   *
   * @param start the clock's first time
   */
  public ManualClock(Instant start) {
    this(new AtomicReference<>(Objects.requireNonNull(start, "start")), ZoneOffset.UTC);
  }

  private ManualClock(AtomicReference<Instant> now, ZoneId zone) {
    this.now = now;
    this.zone = zone;
  }

  /**
   * Moves the clock on by {@code step}.
   *
   * @param step how far, zero or positive
   * @return the new time
   * @throws IllegalArgumentException when {@code step} is negative
   */
  public Instant advance(Duration step) {
    if (step.isNegative()) {
      throw new IllegalArgumentException("A clock only moves forward, not by " + step);
    }
    return now.updateAndGet(t -> t.plus(step));
  }

  /**
   * Moves the clock to {@code time} when that is later than its time; otherwise leaves it.
   *
   * @param time the time to move to
   * @return the clock's time afterwards
   */
  public Instant advanceTo(Instant time) {
    Objects.requireNonNull(time, "time");
    return now.updateAndGet(t -> time.isAfter(t) ? time : t);
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return new ManualClock(now, Objects.requireNonNull(zone, "zone"));
  }

  @Override
  public String toString() {
    return "ManualClock[" + now.get() + ", " + zone + "]";
  }
}
