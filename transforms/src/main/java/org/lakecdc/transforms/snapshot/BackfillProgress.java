package org.lakecdc.transforms.snapshot;

import java.util.Locale;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.Counts;

/**
 * The progress lines of a chunked snapshot's backfill, printed by the launcher once the facts table
 * records a wave's last chunk, and once it records the snapshot's completion:
 *
 * <pre>
 * Backfill of dbo_orders: wave 2 committed, chunks 6/10, 1,200 rows, 3,400 rows/s, ETA 4 s
 * Chunked snapshot 0x0000002A0000010012A1 of …/dbo_orders complete: 15,038 rows in 8 chunks, last stamp 0x0000002A000001002621
 * </pre>
 *
 * The rate and the ETA are those of this run (rows and chunks committed since it started, over its
 * seconds); rows and chunks are the snapshot's so far. The last wave says {@code done} instead of
 * an ETA.
 */
public final class BackfillProgress {
  private BackfillProgress() {}

  /**
   * The line.
   *
   * @param captureInstance the capture instance backfilled
   * @param wave the wave whose last chunk just committed, from 0
   * @param chunksDone chunks recorded so far (all runs)
   * @param chunksTotal chunks planned
   * @param rowsDone rows of the recorded chunks (all runs)
   * @param runChunks chunks this run committed
   * @param runRows rows this run committed
   * @param runSeconds seconds since this run started, at least 0
   * @return e.g. {@code Backfill of dbo_orders: wave 2 committed, chunks 6/10, 1,200 rows, 3,400
   *     rows/s, ETA 4 s}; {@code ETA unknown} before this run committed a chunk; {@code done} when
   *     every chunk is recorded
   */
  public static String line(
      String captureInstance,
      int wave,
      int chunksDone,
      int chunksTotal,
      long rowsDone,
      int runChunks,
      long runRows,
      double runSeconds) {
    double seconds = Math.max(runSeconds, 0.001);
    long rate = Math.round(runRows / seconds);
    String eta;
    if (chunksDone >= chunksTotal) {
      eta = "done";
    } else if (runChunks <= 0) {
      eta = "ETA unknown";
    } else {
      eta = "ETA " + duration((long) Math.ceil((chunksTotal - chunksDone) * seconds / runChunks));
    }
    return String.format(
        Locale.ROOT,
        "Backfill of %s: wave %d committed, chunks %d/%d, %s, %,d rows/s, %s",
        captureInstance,
        wave,
        chunksDone,
        chunksTotal,
        Counts.of(rowsDone, "row", "rows"),
        rate,
        eta);
  }

  /**
   * The completion line.
   *
   * @param s the snapshot's S
   * @param bronzePath the bronze table's path or URI
   * @param rows rows of the snapshot's chunks
   * @param chunks chunks planned (and recorded)
   * @param lastStamp the largest stamp of the chunks (S when none)
   * @return e.g. {@code Chunked snapshot 0x…A1 of /data/dbo_orders complete: 7 rows in 4 chunks,
   *     last stamp 0x…21}
   */
  public static String completion(Lsn s, String bronzePath, long rows, int chunks, Lsn lastStamp) {
    return "Chunked snapshot "
        + s
        + " of "
        + bronzePath
        + " complete: "
        + Counts.of(rows, "row", "rows")
        + " in "
        + Counts.of(chunks, "chunk", "chunks")
        + ", last stamp "
        + lastStamp;
  }

  /** {@code 45 s}, {@code 12 min} (from 120 s), {@code 3 h} (from 120 min); rounded up. */
  static String duration(long seconds) {
    if (seconds < 120) {
      return seconds + " s";
    }
    long minutes = (seconds + 59) / 60;
    if (minutes < 120) {
      return minutes + " min";
    }
    return ((minutes + 59) / 60) + " h";
  }
}
