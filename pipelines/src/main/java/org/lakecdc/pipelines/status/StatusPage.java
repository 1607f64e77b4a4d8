package org.lakecdc.pipelines.status;

import static org.lakecdc.pipelines.reconcile.ReconcilePage.esc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.status.StatusModel.ChunkProgress;
import org.lakecdc.pipelines.status.StatusModel.OpenSnapshot;
import org.lakecdc.pipelines.status.StatusModel.Report;
import org.lakecdc.pipelines.status.StatusModel.SilverStatus;
import org.lakecdc.pipelines.status.StatusModel.TableStatus;
import org.lakecdc.transforms.Counts;

/**
 * {@code Status --html=<file>}: a {@code StatusModel.Report} as one self-contained HTML page (no
 * script, no external asset, so it opens from a file or a CI artifact). A headline with the facts
 * table, when it was read and the source's newest commit; a table with one row per table (target,
 * app id, capture instance, position, last batch, rows today, verdict, lag in seconds, failure,
 * bootstrap, open snapshot with a chunked one's progress as a bar), a failed table's row marked;
 * and the silver and history tables' positions (each row naming its kind). Times are UTC. Every
 * text is HTML-escaped.
 */
public final class StatusPage {
  private StatusPage() {}

  /**
   * Writes the page (UTF-8), replacing the file and creating its directory.
   *
   * @throws UncheckedIOException when the file cannot be written
   */
  public static void write(Path file, Report report) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, html(report), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the page " + file, e);
    }
  }

  /** The page's HTML. */
  static String html(Report report) {
    StringBuilder h = new StringBuilder();
    long failed = report.tables().stream().filter(t -> t.failure() != null).count();
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .append("<title>lakecdc status</title><style>")
        .append("body{font-family:sans-serif;margin:24px;color:#222}")
        .append("table{border-collapse:collapse;margin-bottom:24px}")
        .append("td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left;")
        .append("vertical-align:top}td{font-family:monospace}")
        .append("tr.failed td{background:#fdecea}.ok{color:#1b7f3b}.bad{color:#b3261e}")
        .append("</style></head><body>\n");
    h.append("<h1>lakecdc status</h1>\n<p id=\"summary\" class=\"")
        .append(failed > 0 ? "bad" : "ok")
        .append("\">")
        .append(esc(report.tables().size() + (report.tables().size() == 1 ? " table" : " tables")))
        .append(failed > 0 ? esc(", " + failed + " failed") : "")
        .append("</p>\n<p>Facts <code>")
        .append(esc(report.facts()))
        .append("</code>, read at ")
        .append(esc(String.valueOf(report.readAt())))
        .append("; source: ")
        .append(
            esc(
                report
                    .newest()
                    .map(c -> "newest commit " + c.lsn() + " at " + c.commitTime())
                    .orElse(report.sourceGiven() ? "not read" : "none given")))
        .append("</p>\n");
    h.append("<table id=\"tables\"><tr>");
    for (String column :
        new String[] {
          "target",
          "app id",
          "capture instance",
          "position",
          "last batch",
          "rows today",
          "finalized_until",
          "lag (s)",
          "failure",
          "bootstrap",
          "snapshot"
        }) {
      h.append("<th>").append(esc(column)).append("</th>");
    }
    h.append("</tr>\n");
    for (TableStatus t : report.tables()) {
      h.append(t.failure() != null ? "<tr class=\"failed\">" : "<tr>");
      cell(h, Objects.requireNonNullElse(t.target(), "(no target recorded)"));
      cell(h, t.appId() + (t.generation() > 0 ? " (generation " + t.generation() + ")" : ""));
      cell(h, Objects.requireNonNullElse(t.captureInstance(), "unknown"));
      cell(
          h,
          t.positionLsn() == null
              ? "none"
              : t.positionLsn() + " at " + text(t.positionCommitTime()));
      cell(
          h,
          t.lastBatch() == null
              ? "none"
              : t.lastBatch().batchId() + " at " + text(t.lastBatch().writtenAt()));
      cell(h, String.format("%,d", t.rowsToday()));
      cell(
          h,
          t.verdict() == null || t.verdict().finalizedUntil() == null
              ? "none yet"
              : text(t.verdict().finalizedUntil()));
      cell(h, t.lagSeconds() == null ? "unknown" : t.lagSeconds().toPlainString());
      cell(
          h,
          t.failure() == null
              ? "none"
              : "at "
                  + t.failure().lsn()
                  + ": "
                  + Objects.requireNonNullElse(t.failure().detail(), ""));
      cell(
          h,
          t.bootstrap() == null
              ? "none"
              : (t.bootstrap().rows() == null
                      ? "reused"
                      : Counts.of(t.bootstrap().rows(), "row", "rows"))
                  + " at S "
                  + t.bootstrap().lsn());
      OpenSnapshot open = t.openSnapshot();
      if (open == null) {
        cell(h, "no open snapshot");
      } else {
        h.append("<td>").append(esc(open.mode() + " " + open.kind() + " at S " + open.lsn()));
        ChunkProgress chunks = open.chunks();
        if (chunks != null && chunks.planned() > 0) {
          h.append("<br><progress value=\"")
              .append(chunks.done())
              .append("\" max=\"")
              .append(chunks.planned())
              .append("\"></progress> ")
              .append(esc(chunks.done() + " of " + chunks.planned() + " chunks"));
        }
        h.append("</td>");
      }
      h.append("</tr>\n");
    }
    h.append("</table>\n");
    if (!report.silvers().isEmpty()) {
      h.append("<table id=\"silver\"><tr><th>silver or history table</th><th>kind</th>")
          .append("<th>applied_lsn</th><th>finalized_until</th></tr>\n");
      for (SilverStatus s : report.silvers()) {
        h.append("<tr>");
        cell(h, s.table());
        cell(h, s.kind());
        cell(h, Objects.requireNonNullElse(s.appliedLsn(), "none"));
        cell(h, s.finalizedUntil() == null ? "none yet" : text(s.finalizedUntil()));
        h.append("</tr>\n");
      }
      h.append("</table>\n");
    }
    return h.append("</body></html>\n").toString();
  }

  private static void cell(StringBuilder h, String text) {
    h.append("<td>").append(esc(text)).append("</td>");
  }

  private static String text(@Nullable Instant instant) {
    return instant == null ? "unknown" : instant.toString();
  }

  /** A UTC time as the text output prints it: always with seconds, {@code 2026-11-01T08:00:00Z}. */
  private static String text(@Nullable LocalDateTime utc) {
    return utc == null ? "unknown" : utc.toInstant(java.time.ZoneOffset.UTC).toString();
  }
}
