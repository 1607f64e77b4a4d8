package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;

/**
 * Where a read starts when it has no stored position (docs/options.md). The LSN given or computed
 * is the last <em>processed</em> one; reading starts right after it.
 *
 * <ul>
 *   <li>{@code earliest}: just before the oldest capture instance's minimum LSN, so the first read
 *       starts exactly at {@code sys.fn_cdc_get_min_lsn}.
 *   <li>{@code latest}: {@code max(max_lsn, start_lsn - 1)} of the oldest instance: skips the
 *       history present when the read starts.
 *   <li>an LSN: that LSN, treated as already processed.
 * </ul>
 *
 * <p>{@link #lastProcessed} resolves a position against the source; {@link #checkExplicit} and
 * {@link #lostAfter} tell whether a read starting after an LSN can go on without losing changes.
 */
public final class StartingLsn implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The kinds of starting position. */
  public enum Kind {
    EARLIEST,
    LATEST,
    EXPLICIT
  }

  private static final StartingLsn EARLIEST = new StartingLsn(Kind.EARLIEST, null);
  private static final StartingLsn LATEST = new StartingLsn(Kind.LATEST, null);

  private final Kind kind;
  private final Lsn lsn;

  private StartingLsn(Kind kind, Lsn lsn) {
    this.kind = kind;
    this.lsn = lsn;
  }

  /** Start at the oldest change CDC still holds. */
  public static StartingLsn earliest() {
    return EARLIEST;
  }

  /** Skip the history: start after {@code max_lsn} at the start of the read. */
  public static StartingLsn latest() {
    return LATEST;
  }

  /** Start right after {@code lastProcessed}. */
  public static StartingLsn after(Lsn lastProcessed) {
    return new StartingLsn(Kind.EXPLICIT, Objects.requireNonNull(lastProcessed, "lastProcessed"));
  }

  /**
   * Parses {@code earliest}, {@code latest} (any case) or an LSN in its canonical text, {@code 0x}
   * and exactly 20 hexadecimal digits ({@link Lsn#parseCanonical}: a shorter LSN is refused, not
   * padded); surrounding whitespace is ignored.
   *
   * @throws IllegalArgumentException naming the option {@code startingLsn}, the value and what is
   *     accepted
   */
  public static StartingLsn parse(String text) {
    String value = text == null ? "" : text.strip();
    switch (value.toLowerCase(Locale.ROOT)) {
      case "earliest":
        return EARLIEST;
      case "latest":
        return LATEST;
      default:
        try {
          return after(Lsn.parseCanonical(value));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits"
                  + " such as 0x0000002A000001000001, not '"
                  + text
                  + "'");
        }
    }
  }

  /** The kind of position. */
  public Kind kind() {
    return kind;
  }

  /** The explicit last-processed LSN, present only for {@link Kind#EXPLICIT}. */
  public Optional<Lsn> lsn() {
    return Optional.ofNullable(lsn);
  }

  /**
   * The LSN a new read treats as already processed.
   *
   * @param client an open client
   * @param captureInstance the configured capture instance
   * @return the last processed LSN; reading starts right after it
   * @throws IllegalStateException for {@code latest} when capture has never written and the
   *     instance has no start LSN (retry once the capture job has run)
   */
  public Lsn lastProcessed(CdcClient client, String captureInstance) {
    switch (kind) {
      case EXPLICIT:
        return lsn;
      case EARLIEST:
        {
          CaptureInstance oldest = client.captureInstances(captureInstance).get(0);
          return client.decrementLsn(client.minLsn(oldest.name()));
        }
      case LATEST:
        {
          Lsn last = SnapshotLsn.latestCommitted(client, captureInstance);
          if (last.isZero()) {
            throw new IllegalStateException(
                "startingLsn=latest: capture instance "
                    + captureInstance
                    + " has no start LSN and CDC has no max_lsn yet; retry once the capture job"
                    + " has run");
          }
          return last;
        }
      default:
        throw new IllegalArgumentException("Unknown startingLsn kind " + kind);
    }
  }

  /**
   * Checks an explicit starting LSN of a new read against what CDC holds: one after {@code max_lsn}
   * has nothing to read (a typo, or a position from another database); one whose next change is
   * below the oldest capture instance's minimum LSN starts in a gap: those changes were purged by
   * cleanup, were held only by the configured capture instance if it is disabled (the message then
   * names it), or predate CDC on the table.
   *
   * @throws IllegalArgumentException naming the option, the LSN and {@code max_lsn}
   * @throws org.lakecdc.io.mssqlcdc.client.DataLossError naming the LSN, the instance and its
   *     minimum
   */
  public static void checkExplicit(CdcClient client, String captureInstance, Lsn lastProcessed) {
    Optional<Lsn> max = client.maxLsn();
    if (max.isPresent() && lastProcessed.isAfter(max.get())) {
      throw new IllegalArgumentException(
          "startingLsn "
              + lastProcessed
              + " is after max_lsn "
              + max.get()
              + ": nothing has been captured there yet; use 'latest' to skip the history");
    }
    List<CaptureInstance> listed = client.captureInstances(captureInstance);
    CaptureInstance oldest = listed.get(0);
    Lsn min = client.minLsn(oldest.name());
    Lsn first = lastProcessed.increment();
    if (first.isBefore(min)) {
      List<String> disabled = RangePlanner.disabledInstances(captureInstance, List.of(), listed);
      String heldOnly =
          disabled.isEmpty()
              ? ""
              : ", or held only by capture instance '"
                  + String.join("', '", disabled)
                  + "', disabled before the stream read them,";
      throw new DataLossError(
          oldest.name(),
          first,
          min,
          "startingLsn "
              + lastProcessed
              + " is before the oldest change CDC holds for "
              + oldest.name()
              + " (min_lsn "
              + min
              + "): the changes in between were purged by cleanup"
              + heldOnly
              + " or predate CDC on the table; start with a snapshot (bootstrap) or 'earliest'");
    }
  }

  /**
   * The loss test "the changes right after {@code last} are gone" (docs/behaviour.md §9.2): with
   * {@code next = increment(last)}, the instance that would read {@code next} is the newest of the
   * table's capture instances whose start LSN is at or before it (else the oldest); the changes are
   * lost when {@code next} is below that instance's {@code min_lsn}. A stream positioned at {@code
   * last} cannot go on without losing changes exactly when this returns a value.
   *
   * @param client the source
   * @param captureInstance any capture instance of the table (the table's instances are listed)
   * @param last the last processed LSN
   * @return the reading instance's {@code min_lsn} (the first LSN it still holds) when the changes
   *     right after {@code last} are gone; empty when they are held
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError when the table has no
   *     capture instance left
   */
  public static Optional<Lsn> lostAfter(CdcClient client, String captureInstance, Lsn last) {
    Lsn next = client.incrementLsn(last);
    List<CaptureInstance> instances = client.captureInstances(captureInstance);
    CaptureInstance reading = instances.get(0);
    for (CaptureInstance instance : instances) {
      if (instance.startLsn().isPresent() && !instance.startLsn().get().isAfter(next)) {
        reading = instance;
      }
    }
    Lsn min = client.minLsn(reading.name());
    return next.isBefore(min) ? Optional.of(min) : Optional.empty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StartingLsn
        && ((StartingLsn) o).kind == kind
        && Objects.equals(((StartingLsn) o).lsn, lsn);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, lsn);
  }

  @Override
  public String toString() {
    return kind == Kind.EXPLICIT ? lsn.toString() : kind.name().toLowerCase(Locale.ROOT);
  }
}
