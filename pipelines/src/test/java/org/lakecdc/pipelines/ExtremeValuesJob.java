package org.lakecdc.pipelines;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * Runs the main job on tables holding the extreme and special values of every SQL Server type, for
 * an independent reader to check what bronze holds (the {@code delta-spark-check} module's {@code
 * ExtremeValuesTest} runs this in its own JVM, then reads the tables with delta-spark in its
 * default settings). Usage: {@code ExtremeValuesJob <directory>}; the directory must not hold a
 * database yet.
 *
 * <p>{@code dbo.extremes} (capture instance {@code dbo_extremes}) has one column per type, named
 * after it, and four rows: id 1 the minimums, id 2 the maximums, id 3 special values (the 1582
 * calendar gap, pre-1900 times, the smallest magnitudes), id 4 all NULL. Rows 1 and 2 are in the
 * bootstrap snapshot of a first run; rows 3 and 4 are inserted after it and come through the change
 * tables in a second run. The values are in {@link #extremesRow}; {@code ExtremeValuesTest} states
 * what each becomes.
 *
 * <p>Under the directory: {@code source/}, {@code delta/dbo_extremes}, {@code delta/dbo_variants},
 * {@code delta/dbo_ancient}, {@code delta/facts}, {@code delta/table_finalization}, and the text
 * files:
 *
 * <ul>
 *   <li>{@code variants-refused.txt}: the error of a run on {@code dbo.variants} ({@code id int,
 *       node hierarchyid, v sql_variant}) without {@code columns}: those types have no default
 *       mapping;
 *   <li>then {@code delta/dbo_variants} is written by a run with {@code columns} {@value
 *       #VARIANT_COLUMNS};
 *   <li>{@code ancient-refused.txt}: the error of a run on {@code dbo.ancient} ({@code id int, dto
 *       datetimeoffset(7)}) holding {@code 0001-01-01T00:00:00+14:00}, whose UTC instant
 *       (0000-12-31T10:00:00Z) is before the first TIMESTAMP Delta holds.
 * </ul>
 */
public final class ExtremeValuesJob {
  /** T0 of the history. */
  static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  /** The declared columns of the run on {@code dbo.variants}. */
  static final String VARIANT_COLUMNS = "`id` INT, `node` BINARY, `v` STRING";

  private static final String EXTREMES = "dbo.extremes";
  private static final String VARIANTS = "dbo.variants";
  private static final String ANCIENT = "dbo.ancient";

  private static final String NINES = "9".repeat(38);

  private ExtremeValuesJob() {}

  /**
   * Builds the source, runs the job on each table and writes the refusals.
   *
   * @param args the output directory
   */
  public static void main(String[] args) {
    WriterMain.run("ExtremeValuesJob", args, ExtremeValuesJob::write);
  }

  private static void write(Path dir) throws IOException {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        EXTREMES,
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("c_date", "date"),
            ColumnDefinition.of("c_datetime2", "datetime2(7)"),
            ColumnDefinition.of("c_datetime", "datetime"),
            ColumnDefinition.of("c_smalldatetime", "smalldatetime"),
            ColumnDefinition.of("c_datetimeoffset", "datetimeoffset(7)"),
            ColumnDefinition.of("c_time", "time(7)"),
            ColumnDefinition.of("c_decimal38_0", "decimal(38,0)"),
            ColumnDefinition.of("c_decimal38_38", "decimal(38,38)"),
            ColumnDefinition.of("c_float", "float"),
            ColumnDefinition.of("c_real", "real"),
            ColumnDefinition.of("c_money", "money"),
            ColumnDefinition.of("c_smallmoney", "smallmoney"),
            ColumnDefinition.of("c_bit", "bit"),
            ColumnDefinition.of("c_tinyint", "tinyint"),
            ColumnDefinition.of("c_smallint", "smallint"),
            ColumnDefinition.of("c_int", "int"),
            ColumnDefinition.of("c_bigint", "bigint"),
            ColumnDefinition.of("c_uniqueidentifier", "uniqueidentifier"),
            ColumnDefinition.of("c_binary", "binary(4)"),
            ColumnDefinition.of("c_varbinary", "varbinary(max)"),
            ColumnDefinition.of("c_nvarchar", "nvarchar(50)"),
            ColumnDefinition.of("c_xml", "xml")),
        List.of("id"));
    db.createTable(
        VARIANTS,
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("node", "hierarchyid"),
            ColumnDefinition.of("v", "sql_variant")),
        List.of("id"));
    db.createTable(
        ANCIENT,
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("dto", "datetimeoffset(7)")),
        List.of("id"));
    db.enableCdc(EXTREMES);
    db.enableCdc(VARIANTS);
    db.enableCdc(ANCIENT);
    db.transaction(T0)
        .insert(EXTREMES, extremesRow(1))
        .insert(EXTREMES, extremesRow(2))
        .insert(VARIANTS, Map.of("id", 1, "node", new byte[] {0x58}, "v", "forty-two"))
        .insert(ANCIENT, Map.of("id", 1, "dto", OffsetDateTime.parse("0001-01-01T00:00:00+14:00")))
        .commit();

    Path delta = dir.resolve("delta");
    String facts = delta.resolve("facts").toString();
    String control = delta.resolve("table_finalization").toString();
    JobConfig extremes =
        JobConfig.builder(
                db.clientFactory(),
                "dbo_extremes",
                delta.resolve("dbo_extremes").toString(),
                facts,
                control)
            .build();
    // Two runs: the first reads the bootstrap snapshot (rows 1 and 2), the second the changes
    // committed after it (rows 3 and 4), so that each row comes through exactly one of the two
    // paths (a commit made while a snapshot is being read can be in both).
    System.out.println(
        "ExtremeValuesJob: " + CdcToDeltaJob.run(extremes, JobFixture.direct(), System.out));
    db.transaction(T0.plusSeconds(60))
        .insert(EXTREMES, extremesRow(3))
        .insert(EXTREMES, extremesRow(4))
        .commit();
    System.out.println(
        "ExtremeValuesJob: " + CdcToDeltaJob.run(extremes, JobFixture.direct(), System.out));

    String variantsBronze = delta.resolve("dbo_variants").toString();
    JobConfig variants =
        JobConfig.builder(db.clientFactory(), "dbo_variants", variantsBronze, facts, control)
            .build();
    Files.writeString(
        dir.resolve("variants-refused.txt"), refusal(variants), StandardCharsets.UTF_8);
    System.out.println(
        "ExtremeValuesJob: "
            + CdcToDeltaJob.run(
                variants.toBuilder().columns(VARIANT_COLUMNS).build(),
                JobFixture.direct(),
                System.out));

    JobConfig ancient =
        JobConfig.builder(
                db.clientFactory(),
                "dbo_ancient",
                delta.resolve("dbo_ancient").toString(),
                facts,
                control)
            .build();
    Files.writeString(dir.resolve("ancient-refused.txt"), refusal(ancient), StandardCharsets.UTF_8);
  }

  /**
   * The message of the innermost cause of the run's failure (the error the user is shown first), or
   * a line saying it did not fail.
   */
  private static String refusal(JobConfig config) {
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8)) {
      CdcToDeltaJob.run(config, JobFixture.direct(), out);
      return "the run did not fail";
    } catch (RuntimeException e) {
      Throwable cause = e;
      while (cause.getCause() != null && cause.getCause() != cause) {
        cause = cause.getCause();
      }
      return cause.getMessage();
    }
  }

  /** Row {@code id} of {@code dbo.extremes} (see the class comment). */
  static Map<String, Object> extremesRow(int id) {
    Map<String, Object> row = new HashMap<>();
    row.put("id", id);
    switch (id) {
      case 1 -> {
        row.put("c_date", LocalDate.of(1, 1, 1));
        row.put("c_datetime2", LocalDateTime.of(1, 1, 1, 0, 0));
        row.put("c_datetime", LocalDateTime.of(1753, 1, 1, 0, 0));
        row.put("c_smalldatetime", LocalDateTime.of(1900, 1, 1, 0, 0));
        row.put("c_datetimeoffset", OffsetDateTime.parse("0001-01-01T00:00:00-14:00"));
        row.put("c_time", LocalTime.MIDNIGHT);
        row.put("c_decimal38_0", new BigDecimal("-" + NINES));
        row.put("c_decimal38_38", new BigDecimal("-0." + NINES));
        row.put("c_float", -Double.MAX_VALUE);
        row.put("c_real", -Float.MAX_VALUE);
        row.put("c_money", new BigDecimal("-922337203685477.5808"));
        row.put("c_smallmoney", new BigDecimal("-214748.3648"));
        row.put("c_bit", false);
        row.put("c_tinyint", 0);
        row.put("c_smallint", Short.MIN_VALUE);
        row.put("c_int", Integer.MIN_VALUE);
        row.put("c_bigint", Long.MIN_VALUE);
        row.put("c_uniqueidentifier", "00000000-0000-0000-0000-000000000000");
        row.put("c_binary", new byte[] {0, 0, 0, 0});
        row.put("c_varbinary", new byte[] {0, 0, 0});
        row.put("c_nvarchar", "");
        row.put("c_xml", "<a/>");
      }
      case 2 -> {
        row.put("c_date", LocalDate.of(9999, 12, 31));
        row.put("c_datetime2", LocalDateTime.parse("9999-12-31T23:59:59.9999999"));
        row.put("c_datetime", LocalDateTime.parse("9999-12-31T23:59:59.997"));
        row.put("c_smalldatetime", LocalDateTime.parse("2079-06-06T23:59"));
        row.put("c_datetimeoffset", OffsetDateTime.parse("9999-12-31T23:59:59.9999999+14:00"));
        row.put("c_time", LocalTime.parse("23:59:59.9999999"));
        row.put("c_decimal38_0", new BigDecimal(NINES));
        row.put("c_decimal38_38", new BigDecimal("0." + NINES));
        row.put("c_float", Double.MAX_VALUE);
        row.put("c_real", Float.MAX_VALUE);
        row.put("c_money", new BigDecimal("922337203685477.5807"));
        row.put("c_smallmoney", new BigDecimal("214748.3647"));
        row.put("c_bit", true);
        row.put("c_tinyint", 255);
        row.put("c_smallint", Short.MAX_VALUE);
        row.put("c_int", Integer.MAX_VALUE);
        row.put("c_bigint", Long.MAX_VALUE);
        row.put("c_uniqueidentifier", "ffffffff-ffff-ffff-ffff-ffffffffffff");
        row.put("c_binary", new byte[] {-1, -1, -1, -1});
        row.put("c_varbinary", new byte[0]);
        row.put("c_nvarchar", "\uD83D\uDE00 smile");
        row.put("c_xml", "<a b=\"\uD83D\uDE00\">&amp;</a>");
      }
      case 3 -> {
        row.put("c_date", LocalDate.of(1582, 10, 10));
        row.put("c_datetime2", LocalDateTime.of(1582, 10, 15, 0, 0));
        row.put("c_datetime", LocalDateTime.parse("1899-12-31T23:59:59.997"));
        row.put("c_smalldatetime", LocalDateTime.parse("1900-01-01T00:01"));
        row.put("c_datetimeoffset", OffsetDateTime.parse("1900-01-01T00:00:00+14:00"));
        row.put("c_time", LocalTime.parse("00:00:00.0000001"));
        row.put("c_decimal38_0", BigDecimal.ZERO);
        row.put("c_decimal38_38", new BigDecimal("1E-38"));
        row.put("c_float", Double.MIN_NORMAL);
        row.put("c_real", Float.MIN_NORMAL);
        row.put("c_money", new BigDecimal("0.0001"));
        row.put("c_smallmoney", new BigDecimal("-0.0001"));
        row.put("c_bit", true);
        row.put("c_tinyint", 1);
        row.put("c_smallint", -1);
        row.put("c_int", 0);
        row.put("c_bigint", -1L);
        row.put("c_uniqueidentifier", "6F9619FF-8B86-D011-B42D-00C04FC964FF");
        row.put("c_binary", new byte[] {1});
        row.put("c_varbinary", new byte[] {0});
        row.put("c_nvarchar", "a\u0000b");
        row.put("c_xml", "");
      }
      case 4 -> {
        // Only the key: every other column is NULL.
      }
      default -> throw new IllegalArgumentException("No row " + id);
    }
    return row;
  }
}
