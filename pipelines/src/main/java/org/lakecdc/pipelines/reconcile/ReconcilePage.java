package org.lakecdc.pipelines.reconcile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.reconcile.ReconcileReport;
import org.lakecdc.transforms.reconcile.ReconcileSpec;

/**
 * The self-contained HTML page of a reconcile run ({@code --html}): no script and no external
 * asset, so it opens from a file or a CI artifact. A headline with the verdict, the bronze
 * generation silver reflects (when bronze holds a stream position) and the counts; the buckets as
 * an inline SVG bar chart over the key space (one bar per bucket in key order, its height the
 * larger side's rows, green MATCH, amber IN_FLIGHT, red MISMATCH, a dark outline on the buckets
 * compared row by row, each bar's tooltip its bounds and counts); the first {@value
 * ReconcileResult#FIRST_KEYS} differing keys as a table. Every text is HTML-escaped.
 */
public final class ReconcilePage {
  /** The chart's width and bar area height, in SVG user units (pixels). */
  static final int WIDTH = 960, HEIGHT = 200;

  private ReconcilePage() {}

  /**
   * Writes the page (UTF-8), replacing the file.
   *
   * @param file the page's path
   * @param spec the reconcile
   * @param r the run's outcome
   * @throws UncheckedIOException when the file cannot be written
   */
  public static void write(Path file, ReconcileSpec spec, ReconcileResult r) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, html(spec, r), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the page " + file, e);
    }
  }

  /** The page's HTML. */
  static String html(ReconcileSpec spec, ReconcileResult r) {
    StringBuilder h = new StringBuilder();
    ReconcileReport.Run run = r.plan().run();
    String verdict =
        r.mismatched()
            ? "MISMATCH: silver differs from the source"
            : "silver matches the source"
                + (r.count("IN_FLIGHT") > 0 || r.failures().containsKey(ReconcileReport.IN_FLIGHT)
                    ? " (changes in flight)"
                    : "");
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .append("<title>Reconcile ")
        .append(esc(spec.captureInstance()))
        .append("</title><style>")
        .append("body{font-family:sans-serif;margin:24px;color:#222}")
        .append("table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;")
        .append("font-family:monospace;font-size:13px;text-align:left}")
        .append(".ok{color:#1b7f3b}.bad{color:#b3261e}")
        .append("</style></head><body>\n");
    h.append("<h1>Reconcile of ")
        .append(esc(spec.captureInstance()))
        .append("</h1>\n<p id=\"verdict\" class=\"")
        .append(r.mismatched() ? "bad" : "ok")
        .append("\">")
        .append(esc(verdict))
        .append("</p>\n<p>Silver <code>")
        .append(esc(spec.silver()))
        .append("</code> version ")
        .append(run.silverVersion())
        .append(" (applied_lsn ")
        .append(esc(String.valueOf(run.silverLsn())))
        .append("), source ")
        .append(esc(spec.sourceSchema() + "." + spec.sourceTable()))
        .append(" at ")
        .append(esc(String.valueOf(run.sourceLsn())))
        .append("; run ")
        .append(esc(run.runId()))
        .append("</p>\n");
    if (r.generation() != null) {
      h.append("<p id=\"generation\">").append(esc(r.generation().describe())).append("</p>\n");
    }
    h.append("<p id=\"counts\">")
        .append(r.buckets().size())
        .append(" buckets: ")
        .append(r.count("MATCH"))
        .append(" matched, ")
        .append(r.count("IN_FLIGHT"))
        .append(" in flight, ")
        .append(r.count("MISMATCH"))
        .append(" mismatched; ")
        .append(r.hashed())
        .append(" compared row by row; ")
        .append(r.rowsCompared())
        .append(" rows compared in ")
        .append(String.format(Locale.ROOT, "%.1f", r.seconds()))
        .append(" s</p>\n");
    chart(h, r);
    h.append("<h2>First differing keys</h2>\n");
    if (r.keyRows().isEmpty()) {
      h.append("<p id=\"no-keys\">No differing key.</p>\n");
    } else {
      h.append("<table id=\"keys\"><tr><th>key</th><th>failure</th><th>bucket</th>")
          .append("<th>detail</th></tr>\n");
      for (int i = 0; i < Math.min(ReconcileResult.FIRST_KEYS, r.keyRows().size()); i++) {
        Map<String, Object> k = r.keyRows().get(i);
        h.append("<tr><td>")
            .append(esc((String) k.get(ReconcileReport.KEY)))
            .append("</td><td>")
            .append(esc((String) k.get(ReconcileReport.FAILURE_TYPE)))
            .append("</td><td>[")
            .append(esc(bound(k.get(ReconcileReport.BUCKET_LO))))
            .append(", ")
            .append(esc(bound(k.get(ReconcileReport.BUCKET_HI))))
            .append(")</td><td>")
            .append(esc((String) k.get(ReconcileReport.DETAIL)))
            .append("</td></tr>\n");
      }
      h.append("</table>\n");
    }
    h.append("</body></html>\n");
    return h.toString();
  }

  private static void chart(StringBuilder h, ReconcileResult r) {
    int n = Math.max(1, r.buckets().size());
    long max = 1;
    for (Map<String, Object> b : r.buckets()) {
      max = Math.max(max, larger(b));
    }
    double w = (double) WIDTH / n;
    h.append("<svg id=\"buckets\" xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(HEIGHT + 40)
        .append("\" role=\"img\" aria-label=\"buckets over the key space\">\n");
    for (int i = 0; i < r.buckets().size(); i++) {
      Map<String, Object> b = r.buckets().get(i);
      String status = (String) b.get(ReconcileReport.STATUS);
      double height = Math.max(1, HEIGHT * (double) larger(b) / max);
      String color =
          switch (status) {
            case "MATCH" -> "#2e9e52";
            case "IN_FLIGHT" -> "#e0a100";
            default -> "#d93025";
          };
      h.append(
              String.format(
                  Locale.ROOT,
                  "<rect class=\"bucket %s\" x=\"%.2f\" y=\"%.2f\"",
                  status,
                  i * w,
                  HEIGHT - height))
          .append(
              String.format(
                  Locale.ROOT,
                  " width=\"%.2f\" height=\"%.2f\" fill=\"%s\"",
                  Math.max(0.5, w - 1),
                  height,
                  color))
          .append(
              Boolean.TRUE.equals(b.get(ReconcileReport.HASHED))
                  ? " stroke=\"#111\" stroke-width=\"1\""
                  : "")
          .append("><title>")
          .append(
              esc(
                  "["
                      + bound(b.get(ReconcileReport.BUCKET_LO))
                      + ", "
                      + bound(b.get(ReconcileReport.BUCKET_HI))
                      + ") "
                      + status
                      + ": source "
                      + b.get(ReconcileReport.SOURCE_ROWS)
                      + " rows, silver "
                      + b.get(ReconcileReport.SILVER_ROWS)
                      + " rows"))
          .append("</title></rect>\n");
    }
    if (!r.buckets().isEmpty()) {
      h.append("<text x=\"0\" y=\"")
          .append(HEIGHT + 16)
          .append("\" font-size=\"12\">")
          .append(esc(bound(r.buckets().get(0).get(ReconcileReport.BUCKET_LO))))
          .append("</text><text x=\"")
          .append(WIDTH)
          .append("\" y=\"")
          .append(HEIGHT + 16)
          .append("\" font-size=\"12\" text-anchor=\"end\">")
          .append(
              esc(bound(r.buckets().get(r.buckets().size() - 1).get(ReconcileReport.BUCKET_HI))))
          .append("</text>\n");
    }
    h.append("</svg>\n");
  }

  private static long larger(Map<String, Object> b) {
    return Math.max(
        ((Number) b.get(ReconcileReport.SOURCE_ROWS)).longValue(),
        ((Number) b.get(ReconcileReport.SILVER_ROWS)).longValue());
  }

  private static String bound(@Nullable Object v) {
    return v == null ? "open" : v.toString();
  }

  /** HTML-escapes text ({@code & < > " '}). */
  public static String esc(@Nullable String s) {
    if (s == null) {
      return "";
    }
    StringBuilder out = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      switch (c) {
        case '&' -> out.append("&amp;");
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&#39;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }
}
