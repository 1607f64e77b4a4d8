package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * Runs the main job into two bronze tables whose columns later need Delta type widening (C054), for
 * an independent reader to enable it and check the result: the {@code delta-spark-check} module
 * runs this in its own JVM twice, with delta-spark's {@code ALTER TABLE} in between. Usage: {@code
 * WideningJob <directory> before|after}. Each target is {@link JobFixture}'s layout under a
 * subdirectory of the directory ({@code source/}, {@code delta/dbo_orders} (bronze), {@code
 * delta/facts}, {@code delta/table_finalization}):
 *
 * <ul>
 *   <li>{@value #DECIMAL}: {@code amount decimal(9,2)}, widened to DECIMAL(18,4); orders 0 (1.25)
 *       and 1 (2.50), then order 2 (1.2345).
 *   <li>{@value #SHORT}: an added column {@code qty smallint}, widened to INT; orders 0 (qty 7) and
 *       1 (qty 8), then order 2 (qty 70000).
 * </ul>
 *
 * <ul>
 *   <li>{@code before}: for each target, the first two orders at T0 and a bootstrap run; then
 *       {@code ALTER COLUMN} to the wider type and the third order at T0+2m; a second run, which
 *       must fail with {@link SchemaChangedError} before writing: its message goes to {@value
 *       #REFUSAL} in the target's directory (exit code 1 when a run does not fail).
 *   <li>{@code after}: once {@code delta.enableTypeWidening} is on, the job runs again on each
 *       target: it widens the column and writes the third order (exit code 1 unless one row).
 * </ul>
 */
public final class WideningJob {
  /** The file, under a target's directory, holding the refused run's message. */
  public static final String REFUSAL = "refusal.txt";

  /** The target whose {@code amount} goes from DECIMAL(9,2) to DECIMAL(18,4). */
  public static final String DECIMAL = "decimal";

  /** The target whose {@code qty} goes from SMALLINT to INT. */
  public static final String SHORT = "short";

  private WideningJob() {}

  /**
   * Entry point.
   *
   * @param args the directory and the phase
   * @throws IOException when a message cannot be written
   */
  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    for (String target : new String[] {DECIMAL, SHORT}) {
      switch (args[1]) {
        case "before" -> before(dir.resolve(target), target);
        case "after" -> after(dir.resolve(target));
        default -> throw new IllegalArgumentException("phase must be before or after: " + args[1]);
      }
    }
    System.exit(0);
  }

  private static void before(Path dir, String target) throws IOException {
    JobFixture f = new JobFixture(dir);
    boolean decimal = target.equals(DECIMAL);
    if (decimal) {
      f.db.alterColumn(ORDERS, "amount", SqlServerType.parse("decimal(9,2)"));
    } else {
      f.db.addColumn(ORDERS, "qty", SqlServerType.parse("smallint"));
    }
    f.db.enableCdc(ORDERS);
    f.db
        .transaction(at(0))
        .insert(ORDERS, order(0, decimal ? "1.25" : "7"))
        .insert(ORDERS, order(1, decimal ? "2.50" : "8"))
        .commit();
    f.run(config(f.db, dir));
    System.out.println(f.lastOutput);
    if (decimal) {
      f.db.alterColumn(ORDERS, "amount", SqlServerType.parse("decimal(18,4)"));
    } else {
      f.db.alterColumn(ORDERS, "qty", SqlServerType.parse("int"));
    }
    f.db.transaction(at(2)).insert(ORDERS, order(2, decimal ? "1.2345" : "70000")).commit();
    try {
      f.run(config(f.db, dir));
    } catch (SchemaChangedError e) {
      Files.writeString(dir.resolve(REFUSAL), e.getMessage(), StandardCharsets.UTF_8);
      System.out.println("Refused as expected: " + e.getMessage());
      return;
    }
    System.err.println("The run after ALTER COLUMN did not fail on " + dir);
    System.exit(1);
  }

  /** Order {@code id}: amount {@code value} ({@value #DECIMAL}) or qty {@code value}. */
  private static Map<String, Object> order(int id, String value) {
    Map<String, Object> row = JobFixture.order(id, "new", value.contains(".") ? value : "1.00");
    if (!value.contains(".")) {
      row.put("qty", Integer.parseInt(value));
    }
    return row;
  }

  private static void after(Path dir) {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    JobSummary summary = CdcToDeltaJob.run(config(db, dir), JobFixture.direct(), System.out);
    System.out.println("Rows written to " + dir + ": " + summary.rows());
    if (summary.rows() != 1) {
      System.err.println("Expected one row (order 2), not " + summary.rows());
      System.exit(1);
    }
  }

  private static JobConfig config(FakeSqlServer db, Path dir) {
    return JobConfig.builder(
            db.clientFactory(),
            CI,
            dir.resolve("delta/dbo_orders").toString(),
            dir.resolve("delta/facts").toString(),
            dir.resolve("delta/table_finalization").toString())
        .maxCommitsPerBatch(4)
        .build();
  }
}
