package org.lakecdc.pipelines.status;

import static org.lakecdc.pipelines.status.StatusModel.*;
import static org.lakecdc.pipelines.status.StatusReader.*;

import java.io.PrintStream;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/** The text rendering of a {@link StatusModel.Report}: a header line, then one block per table. */
public final class StatusText {
  private StatusText() {}

  /** The text form: a header line, then one aligned block per table. */
  public static void printText(Report report, PrintStream out) {
    out.printf(
        "%s in %s, read at %s%n",
        Counts.of(report.tables().size(), "table", "tables"), report.facts(), report.readAt());
    if (report.newest().isPresent()) {
      Commit newest = report.newest().get();
      out.printf(
          "Source: newest commit %s at %s%n", newest.lsn(), TableReading.text(newest.commitTime()));
    } else {
      out.printf(
          "Source: %s; each lag is the last batch's (source_max_commit_ts - end_commit_ts)%n",
          report.sourceGiven() ? "not read" : "none given");
    }
    for (TableStatus t : report.tables()) {
      Map<String, String> lines = new LinkedHashMap<>();
      lines.put("app id", t.appId());
      if (t.generation() > 0) {
        lines.put("generation", t.generation() + " (app id " + t.generationAppId() + ")");
      }
      lines.put("capture instance", Objects.requireNonNullElse(t.captureInstance(), "unknown"));
      lines.put(
          "position",
          t.positionLsn() == null
              ? "none"
              : t.positionLsn()
                  + (t.positionCommitTime() == null
                      ? " (no commit time: not in cdc.lsn_time_mapping)"
                      : " committed at " + t.positionCommitTime()));
      lines.put(
          "last batch",
          t.lastBatch() == null
              ? "none"
              : t.lastBatch().batchId()
                  + ", written at "
                  + TableReading.text(t.lastBatch().writtenAt()));
      lines.put("rows today", String.format("%,d", t.rowsToday()));
      lines.put(
          "finalized_until",
          t.verdict() == null || t.verdict().finalizedUntil() == null
              ? "none yet"
              : TableReading.text(t.verdict().finalizedUntil())
                  + (t.granularities().isEmpty()
                      ? ""
                      : " (" + granularityText(t.granularities()) + ")"));
      lines.put(
          "lag",
          t.lagSeconds() == null
              ? "unknown"
              : t.lagSeconds().toPlainString()
                  + " s"
                  + (t.lagFromSource()
                      ? " behind the source's newest commit"
                      : " behind the source at the last batch"));
      if (t.failure() == null) {
        lines.put("failure", "none");
      } else {
        lines.put(
            "failure",
            "at "
                + Objects.requireNonNullElse(t.failure().lsn(), "an unknown LSN")
                + ", written at "
                + TableReading.text(t.failure().writtenAt())
                + ": "
                + t.failure().detail());
      }
      lines.put(
          "bootstrap",
          t.bootstrap() == null
              ? "none"
              : (t.bootstrap().rows() == null
                      ? "a reused snapshot"
                      : Counts.of(t.bootstrap().rows(), "row", "rows"))
                  + " at S "
                  + t.bootstrap().lsn()
                  + (t.bootstrapChunks() == null
                      ? ""
                      : " in " + Counts.of(t.bootstrapChunks(), "chunk", "chunks"))
                  + ", written at "
                  + TableReading.text(t.bootstrap().writtenAt()));
      if (t.joined() != null) {
        lines.put("joined", membershipText(t.joined()));
      }
      if (t.left() != null) {
        lines.put("left", membershipText(t.left()));
      }
      OpenSnapshot open = t.openSnapshot();
      lines.put(
          "snapshot",
          open == null
              ? "no open snapshot"
              : open.mode()
                  + " "
                  + open.kind()
                  + " open at S "
                  + open.lsn()
                  + ", generation "
                  + open.generation()
                  + ", since "
                  + TableReading.text(open.openedAt()));
      if (open != null && open.chunks() != null) {
        lines.put("chunks", progressText(open.chunks()));
      }
      if (t.newestResnapshot() != null) {
        lines.put(
            "resnapshots",
            t.resnapshots() + ", the newest: " + resnapshotText(t.newestResnapshot()));
      }
      FailedResnapshot failed = t.failedResnapshot();
      if (failed != null) {
        lines.put(
            "resnapshot failed",
            "generation "
                + failed.generation()
                + " at S "
                + failed.snapshotLsn()
                + ", written at "
                + TableReading.text(failed.writtenAt())
                + (failed.reason() == null ? "" : ": " + failed.reason()));
      }
      if (t.newestSkipped() != null) {
        lines.put(
            "data skipped",
            Counts.of(t.skipped(), "gap", "gaps")
                + ", the newest: "
                + skippedText(t.newestSkipped()));
      }
      if (!t.lostPeriods().isEmpty()) {
        lines.put(
            "lost periods",
            t.lostPeriods().stream().map(LostPeriod::toString).collect(Collectors.joining(", "))
                + " (no verdict covers them)");
      }
      out.println();
      out.println(
          t.target() == null
              ? "(no target recorded)"
              : t.target() + (t.targetExists() ? "" : "  (no Delta table there)"));
      for (Map.Entry<String, String> line : lines.entrySet()) {
        out.printf("  %-17s %s%n", line.getKey(), line.getValue());
      }
    }
    for (SilverStatus silver : report.silvers()) {
      out.println();
      out.println(silver.table() + "  (" + silver.kind() + ")");
      out.printf("  %-17s %s%n", "applied_lsn", silver.appliedLsn());
      out.printf(
          "  %-17s %s%n",
          "finalized_until",
          silver.finalizedUntil() == null
              ? "none yet"
              : TableReading.text(silver.finalizedUntil()));
    }
  }

  /**
   * A re-snapshot, e.g. {@code generation 1, whole, 4 rows at S 0x0000002A000001000061, written at
   * 2030-01-02T03:00:00Z, lost 2026-09-28T13:52:00Z to 2026-09-28T13:54:00Z} ({@code chunked in 4
   * chunks} for a chunked one; {@code rows not recorded} when the row has none; the gap left out
   * when the row records none).
   */
  static String resnapshotText(ResnapshotFact r) {
    boolean chunked = ChunkedSnapshotFacts.MODE_CHUNKED.equals(r.mode());
    return "generation "
        + r.generation()
        + ", "
        + (chunked
            ? "chunked"
                + (r.chunks() == null ? "" : " in " + Counts.of(r.chunks(), "chunk", "chunks"))
            : "whole")
        + ", "
        + (r.rows() == null ? "rows not recorded" : Counts.of(r.rows(), "row", "rows"))
        + " at S "
        + r.snapshotLsn()
        + ", written at "
        + TableReading.text(r.writtenAt())
        + gapText(r.lostFrom(), r.lostTo());
  }

  /**
   * A skipped gap, e.g. {@code batch 1, lost 2026-09-28T13:52:00Z to 2026-09-28T16:00:00Z
   * (certain), written at 2030-01-02T03:00:00Z}; {@code of generation n} after the batch when n >
   * 0, {@code (possible: <reason>)} for a gap that is only possible.
   */
  static String skippedText(SkippedGap g) {
    return "batch "
        + (g.batchId() == null ? "unknown" : g.batchId().toString())
        + (g.generation() > 0 ? " of generation " + g.generation() : "")
        + gapText(g.lostFrom(), g.lostTo())
        + (g.certain()
            ? " (certain)"
            : " (possible" + (g.reason() == null ? ")" : ": " + g.reason() + ")"))
        + ", written at "
        + TableReading.text(g.writtenAt());
  }

  /**
   * {@code , lost <from> to <to>} ({@code , lost up to <to>} without a start); empty without both.
   */
  static String gapText(@Nullable Instant from, @Nullable Instant to) {
    if (to == null) {
      return from == null ? "" : ", lost from " + from;
    }
    return from == null ? ", lost up to " + to : ", lost " + from + " to " + to;
  }

  /**
   * A chunked snapshot's progress line, e.g. {@code 2 of 4 done, 1 of 2 waves (2 chunks each),
   * 1,200 rows, newest chunk at 2030-01-02T03:10:00Z}, or {@code not planned yet} before its plan.
   */
  static String progressText(ChunkProgress p) {
    String rows =
        Counts.of(p.rows(), "row", "rows")
            + (p.newestChunkAt() == null
                ? ", no chunk yet"
                : ", newest chunk at " + TableReading.text(p.newestChunkAt()));
    if (p.planned() < 0) {
      return "not planned yet" + (p.done() == 0 ? "" : ", " + p.done() + " done, " + rows);
    }
    return p.done()
        + " of "
        + p.planned()
        + " done, "
        + p.wavesDone()
        + " of "
        + p.wavesPlanned()
        + " waves ("
        + Counts.of(p.chunksPerWave(), "chunk", "chunks")
        + " each), "
        + rows;
  }

  /** A {@code joined} or {@code left} row: {@code <written_at> (<where it was listed>)}. */
  private static String membershipText(StatusModel.FactsEvent row) {
    return TableReading.text(row.writtenAt()) + " (" + row.detail() + ")";
  }
}
