package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * Runs the main job once on a small, fixed source database, for an independent reader to check its
 * tables (the {@code delta-spark-check} module runs this in its own JVM, then reads the tables with
 * delta-spark). Usage: {@code SampleJob <directory>}; the directory must not hold a database yet.
 *
 * <p>The source is {@link JobFixture}'s {@code dbo.orders} (capture instance {@code dbo_orders}, T0
 * = 2026-09-28T13:50:00Z), with this history; LSNs are the simulator's, {@code 0x0000002A00000100}
 * + the 4 hex digits shown:
 *
 * <ol>
 *   <li>{@code 0001} at T0: insert orders 1, 2, 3.
 *   <li>{@code 0011} at T0+1m: insert orders 4, 5.
 *   <li>{@code 0021} at T0+2m: update order 2 (status, amount), delete order 3.
 *   <li>The job starts with {@code bootstrap=true} on new tables and records the snapshot S =
 *       {@code 0021} (max_lsn; orders 1, 2, 4, 5 then). Then, before the pipeline reads the
 *       snapshot and the changes (the {@code beforeStream} hook of {@link
 *       CdcToDeltaJob#run(JobConfig, org.apache.beam.sdk.options.PipelineOptions, PrintStream,
 *       Runnable)}):
 *   <li>{@code 0031} at T0+5m: insert orders 6, 7, 8.
 *   <li>{@code 0041} at T0+6m: update order 1.
 *   <li>{@code 0051} at T0+7m: delete order 4, insert order 9.
 *   <li>{@code 0061} at T0+8m: update order 6.
 *   <li>{@code 0071} at T0+2h05m (15:55): an idle entry.
 * </ol>
 *
 * <p>The pipeline reads the snapshot after those commits, as a snapshot of a live table is read
 * while it changes: it holds orders 1, 2, 5, 6, 7, 8, 9 as they are at the end, each stamped S, and
 * the changes after S are in bronze as well (silver applies both to the same end state).
 *
 * <p>With {@value #MAX_COMMITS_PER_BATCH} commits a batch, the job writes batch 0 ({@code 0031},
 * {@code 0041}: 5 rows), batch 1 ({@code 0051}, {@code 0061}: 4 rows) and batch 2 (the idle entry:
 * no rows, so no bronze commit); the verdict is 2026-09-28T15:00. Values of {@code updated_at} have
 * seven fractional digits ({@code datetime2(7)}), which bronze keeps to the microsecond.
 *
 * <p>Under the directory: {@code source/} (the simulator's files), {@code delta/dbo_orders}
 * (bronze), {@code delta/facts}, {@code delta/table_finalization} (control), and {@value
 * #EXPECTED}: what the source database itself says, independent of the job, as tab-separated lines
 * ({@code \N} for NULL; times UTC, {@link LocalDateTime#toString()}):
 *
 * <ul>
 *   <li>{@code max_commits_per_batch <n>}
 *   <li>{@code snapshot <S> <commit time of S>}: max_lsn when the job started
 *   <li>{@code row <order_id> <status> <amount> <updated_at>}: the table as the snapshot read it
 *       (after the last commit), in key order
 *   <li>{@code commit <lsn> <commit time>}: each {@code cdc.lsn_time_mapping} entry after S, in
 *       order (idle entries included)
 *   <li>{@code change <start_lsn> <seqval> <operation> <command_id> <commit time> <order_id>
 *       <status> <amount> <updated_at>}: each change row after S, in change order
 * </ul>
 */
public final class SampleJob {
  /** The job's {@code maxCommitsPerBatch}. */
  public static final int MAX_COMMITS_PER_BATCH = 2;

  /** The expectations file under the directory. */
  public static final String EXPECTED = "expected.tsv";

  private SampleJob() {}

  /**
   * Builds the source, runs the job and writes {@value #EXPECTED}.
   *
   * @param args the output directory
   */
  public static void main(String[] args) {
    WriterMain.run("SampleJob", args, SampleJob::write);
  }

  private static void write(Path dir) throws IOException {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    f.db
        .transaction(at(0))
        .insert(ORDERS, order(1, "new", "10.00", "2026-09-28T13:49:59.1234567"))
        .insert(ORDERS, order(2, "new", "20.00", "2026-09-28T13:49:59.2000001"))
        .insert(ORDERS, order(3, "new", "30.00", "2026-09-28T13:49:59.3"))
        .commit();
    f.db
        .transaction(at(1))
        .insert(ORDERS, order(4, "new", "40.00", "2026-09-28T13:50:59.4444449"))
        .insert(ORDERS, order(5, "new", "-0.01", null))
        .commit();
    f.db
        .transaction(at(2))
        .update(
            ORDERS,
            List.of(2),
            Map.of(
                "status",
                "paid",
                "amount",
                new BigDecimal("21.50"),
                "updated_at",
                LocalDateTime.parse("2026-09-28T13:51:59.9999999")))
        .delete(ORDERS, List.of(3))
        .commit();

    Lsn s;
    Instant sTime;
    try (CdcClient client = f.db.openClient()) {
      s = client.maxLsn().orElseThrow();
      sTime = client.commit(s).orElseThrow().commitTime();
    }

    JobConfig config =
        JobConfig.builder(f.db.clientFactory(), CI, f.bronze, f.facts, f.control)
            .maxCommitsPerBatch(MAX_COMMITS_PER_BATCH)
            .build();
    JobSummary summary =
        CdcToDeltaJob.run(config, JobFixture.direct(), System.out, () -> secondHalf(f));
    System.out.println("SampleJob: " + summary);
    // The snapshot is read by the pipeline after the second half was committed (a live table keeps
    // changing while its snapshot is read): it holds the table as it is now, stamped S.
    List<Map<String, Object>> read = f.db.rows(ORDERS);

    List<String> lines = new ArrayList<>();
    lines.add("max_commits_per_batch\t" + MAX_COMMITS_PER_BATCH);
    lines.add(tsv("snapshot", s, utc(sTime)));
    for (Map<String, Object> row : read) {
      lines.add(
          tsv(
              "row",
              row.get("order_id"),
              row.get("status"),
              row.get("amount"),
              row.get("updated_at")));
    }
    try (CdcClient client = f.db.openClient()) {
      Lsn after = s;
      for (Optional<Commit> next = client.nthCommitAfter(after, 1);
          next.isPresent();
          next = client.nthCommitAfter(after, 1)) {
        lines.add(tsv("commit", next.get().lsn(), utc(next.get().commitTime())));
        after = next.get().lsn();
      }
      List<String> columns = List.of("order_id", "status", "amount", "updated_at");
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(new ChangeQuery(CI, s.increment(), Lsn.MAX, columns, true))) {
        while (rows.hasNext()) {
          ChangeRow r = rows.next();
          List<Object> fields = new ArrayList<>();
          fields.add("change");
          fields.add(r.startLsn());
          fields.add(r.seqval());
          fields.add(r.operation());
          fields.add(r.commandId());
          fields.add(utc(r.commitTime()));
          fields.addAll(r.values());
          lines.add(tsv(fields.toArray()));
        }
      }
    }
    Files.write(dir.resolve(EXPECTED), lines, StandardCharsets.UTF_8);
  }

  /** The history after the snapshot: four commits and an idle entry. */
  private static void secondHalf(JobFixture f) {
    f.db
        .transaction(at(5))
        .insert(ORDERS, order(6, "new", "60.00", "2026-09-28T13:54:59.0000006"))
        .insert(ORDERS, order(7, "new", "70.00", null))
        .insert(ORDERS, order(8, "new", "80.00", "2026-09-28T13:54:59.8"))
        .commit();
    f.db
        .transaction(at(6))
        .update(
            ORDERS,
            List.of(1),
            Map.of("status", "shipped", "updated_at", LocalDateTime.parse("2026-09-28T13:56:00")))
        .commit();
    f.db
        .transaction(at(7))
        .delete(ORDERS, List.of(4))
        .insert(ORDERS, order(9, "new", "99999999999999.99", "2026-09-28T13:57:00.0000001"))
        .commit();
    f.db
        .transaction(at(8))
        .update(ORDERS, List.of(6), Map.of("status", "paid", "amount", new BigDecimal("65.25")))
        .commit();
    f.db.idle(at(125));
  }

  private static Map<String, Object> order(int id, String status, String amount, String updatedAt) {
    Map<String, Object> row = JobFixture.order(id, status, amount);
    row.put("updated_at", updatedAt == null ? null : LocalDateTime.parse(updatedAt));
    return row;
  }

  private static LocalDateTime utc(Instant instant) {
    return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
  }

  /** One tab-separated line: NULL as {@code \N}, decimals in plain notation. */
  private static String tsv(Object... fields) {
    StringBuilder line = new StringBuilder();
    for (Object field : fields) {
      if (line.length() > 0) {
        line.append('\t');
      }
      if (field == null) {
        line.append("\\N");
      } else if (field instanceof BigDecimal) {
        line.append(((BigDecimal) field).toPlainString());
      } else {
        line.append(field);
      }
    }
    return line.toString();
  }
}
