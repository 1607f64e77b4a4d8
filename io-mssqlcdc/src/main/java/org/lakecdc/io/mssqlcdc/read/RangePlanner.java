package org.lakecdc.io.mssqlcdc.read;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.client.SplitPoint;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The planning rules of the change reader, as pure functions over a {@link CdcClient}: which
 * capture instance reads which part of an LSN interval, the retention guard, and how a range is cut
 * into parts of balanced change rows. docs/sql-server.md "Switching to a new capture instance",
 * docs/architecture.md "Data flow".
 */
final class RangePlanner {
  /**
   * Default minimum change rows of a part when a range is split for parallel reading ({@code
   * MIN_ROWS_PER_PARTITION} of the reference): a range under about twice this stays one part.
   */
  static final long DEFAULT_MIN_ROWS_PER_PARTITION = 50_000;

  private RangePlanner() {}

  /**
   * Cuts the closed interval {@code [lo, hi]} at the start LSN S of each newer capture instance:
   * the older instance reads below S, the newer from S on (from S every commit is in both). Walking
   * from the oldest instance: with successor start S unknown or after {@code hi}, the rest is the
   * current instance's; otherwise the current instance reads {@code [lo, S - 1]} when {@code lo <
   * S}, and {@code lo} moves to {@code max(lo, S)}. Never returns an empty or inverted range.
   *
   * @param instancesOldestFirst the table's capture instances, oldest first (as {@link
   *     CdcClient#captureInstances} lists them)
   * @return the parts in LSN order, each naming its instance; empty when {@code hi < lo}
   */
  static List<InstanceRange> cutAtNewerInstances(
      List<CaptureInstance> instancesOldestFirst, Lsn lo, Lsn hi) {
    List<InstanceRange> parts = new ArrayList<>();
    if (hi.isBefore(lo) || instancesOldestFirst.isEmpty()) {
      return parts;
    }
    Lsn from = lo;
    for (int i = 0; i < instancesOldestFirst.size(); i++) {
      CaptureInstance current = instancesOldestFirst.get(i);
      Optional<Lsn> successorStart =
          i + 1 < instancesOldestFirst.size()
              ? instancesOldestFirst.get(i + 1).startLsn()
              : Optional.empty();
      if (successorStart.isEmpty() || successorStart.get().isAfter(hi)) {
        parts.add(new InstanceRange(current.name(), from, hi));
        return parts;
      }
      Lsn start = successorStart.get();
      if (from.isBefore(start)) {
        parts.add(new InstanceRange(current.name(), from, start.decrement()));
      }
      from = Lsn.max(from, start);
    }
    return parts;
  }

  /**
   * The retention guard: fails when the instance's minimum LSN is past the start of {@code range},
   * i.e. cleanup has removed (or is removing) changes the range needs. Checked before a range is
   * read and again after (SQL Server moves the minimum first, then deletes rows below it; a purged
   * range reads as empty without an error, so only the moved minimum shows the loss).
   *
   * @param when what the check follows, for the message: {@code "before reading"} or {@code "during
   *     the read"}
   * @throws DataLossError naming the instance, the range, the new minimum and that a re-snapshot is
   *     required
   */
  static void checkRetention(CdcClient client, InstanceRange range, String when) {
    checkRetention(client, range, when, List.of());
  }

  /**
   * The retention guard of {@link #checkRetention(CdcClient, InstanceRange, String)}, for the
   * oldest range of a batch: when capture instances the read knew are gone (disabled), the changes
   * below the minimum LSN may also have been held only by them (docs/architecture.md "Data flow"),
   * and the message says so.
   *
   * @param when what the check follows, for the message: {@code "before reading"} or {@code "during
   *     the read"}
   * @param disabledInstances the capture instances of the table the read knew (the configured one,
   *     those listed when the pipeline was built) that are no longer listed; empty when none
   * @throws DataLossError {@code <ci>: change data from <from> was purged by CDC cleanup <when> of
   *     the range <from>..<to>[, or held only by capture instance '<gone>', disabled before the
   *     stream read them]; the capture instance's min_lsn is now <min> (committed at <time>). The
   *     changes in between are gone from cdc.<ci>_CT: a re-snapshot is required (...)}
   */
  static void checkRetention(
      CdcClient client, InstanceRange range, String when, List<String> disabledInstances) {
    Lsn min = client.minLsn(range.captureInstance());
    if (range.fromLsn().isBefore(min)) {
      String committed =
          client
              .commit(min)
              .map(Commit::commitTime)
              .map(t -> " (committed at " + t + ")")
              .orElse("");
      String disabled = "";
      if (!disabledInstances.isEmpty()) {
        disabled =
            ", or held only by capture instance"
                + (disabledInstances.size() > 1 ? "s " : " ")
                + String.join(", ", disabledInstances.stream().map(n -> "'" + n + "'").toList())
                + ", disabled before the stream read them";
      }
      throw new DataLossError(
          range.captureInstance(),
          range.fromLsn(),
          min,
          range.captureInstance()
              + ": change data from "
              + range.fromLsn()
              + " was purged by CDC cleanup "
              + when
              + " of the range "
              + range.fromLsn()
              + ".."
              + range.toLsn()
              + disabled
              + "; the capture instance's min_lsn is now "
              + min
              + committed
              + ". The changes in between are gone from cdc."
              + range.captureInstance()
              + "_CT: a re-snapshot is required (onDataLoss=resnapshot takes one automatically into"
              + " a new generation, onDataLoss=skip skips ahead and records the gap; raise the CDC"
              + " retention so the stream keeps up).");
    }
  }

  /**
   * The capture instances a read knew that the current listing no longer has (disabled): the
   * configured one first, then those listed when the pipeline was built, each once, names compared
   * ignoring case.
   *
   * @param configured the capture instance the read was configured with
   * @param known the instances listed when the pipeline was built, oldest first
   * @param listed the table's instances now, as {@link CdcClient#captureInstances} lists them
   * @return the names no longer listed, possibly none
   */
  static List<String> disabledInstances(
      String configured, List<String> known, List<CaptureInstance> listed) {
    List<String> gone = new ArrayList<>();
    List<String> candidates = new ArrayList<>();
    candidates.add(configured);
    candidates.addAll(known);
    for (String name : candidates) {
      boolean present = listed.stream().anyMatch(i -> i.name().equalsIgnoreCase(name));
      boolean seen = gone.stream().anyMatch(g -> g.equalsIgnoreCase(name));
      if (!present && !seen) {
        gone.add(name);
      }
    }
    return gone;
  }

  /**
   * Cuts {@code [lo, hi]} of one instance into parts of about equal change rows from the tiles of
   * the split query (docs/architecture.md "Data flow"): walk the tiles in bound order, skip a bound
   * below {@code lo} (a bound shared by two tiles), accumulate rows, and close a part {@code [lo,
   * bound]} when the bound is before {@code hi} and the accumulated rows reach {@code
   * minRowsPerPart}; the next part starts at the tile's {@code next}. A tail short of the floor
   * joins the part before.
   *
   * @param tiles the split query's tiles, ordered by bound
   * @param minRowsPerPart the floor of change rows per part, at least 1
   * @return closed parts {@code [from, to]} in LSN order covering exactly {@code [lo, hi]}
   */
  static List<Lsn[]> balanceParts(List<SplitPoint> tiles, Lsn lo, Lsn hi, long minRowsPerPart) {
    List<Lsn[]> parts = new ArrayList<>();
    Lsn from = lo;
    long rows = 0;
    for (SplitPoint tile : tiles) {
      if (tile.bound().isBefore(from)) {
        rows += tile.rows();
        continue;
      }
      rows += tile.rows();
      if (tile.bound().isBefore(hi) && rows >= minRowsPerPart) {
        parts.add(new Lsn[] {from, tile.bound()});
        from = tile.next();
        rows = 0;
      }
    }
    if (!parts.isEmpty() && rows < minRowsPerPart) {
      Lsn[] previous = parts.remove(parts.size() - 1);
      from = previous[0];
    }
    parts.add(new Lsn[] {from, hi});
    return parts;
  }
}
