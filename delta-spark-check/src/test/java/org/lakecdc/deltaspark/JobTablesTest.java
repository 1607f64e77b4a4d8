package org.lakecdc.deltaspark;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.actions.Action;
import org.apache.spark.sql.delta.actions.AddFile;
import org.apache.spark.sql.delta.actions.CommitInfo;
import org.apache.spark.sql.delta.actions.RemoveFile;
import org.apache.spark.sql.delta.actions.SetTransaction;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;
import scala.collection.JavaConverters;

/**
 * delta-spark 3.3 (Spark 3.5) reads the three tables of one run of the main job: the pipelines
 * module's {@code SampleJob} builds a small source database with the simulator and runs {@code
 * CdcToDeltaJob} on the DirectRunner (a bootstrap snapshot, then batches of two commits) in a
 * separate JVM on the pipelines test classpath. Expected rows come from what the source database
 * itself said ({@code expected.tsv}: the table as the snapshot read it, the commits and change rows
 * after S), cut into batches here by the documented rule; the scenario's constants ({@code
 * SampleJob}'s Javadoc) are asserted besides, so a writer that produced nothing cannot pass.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class JobTablesTest {
  /** The capture instance, and the job's app id. */
  private static final String CI = "dbo_orders";

  /** The simulator's LSNs of SampleJob's history: this prefix + 4 hex digits. */
  private static final String LSN = "0x0000002A00000100";

  @TempDir static Path dir;

  private static SparkSession spark;
  private static Expected expected;

  @BeforeAll
  static void runTheJob(SharedSpark.Holder shared) throws IOException, InterruptedException {
    WriterJvm writer =
        WriterJvm.start("lakecdc.pipelines.dir", "org.lakecdc.pipelines.SampleJob", dir);
    spark = shared.session();
    writer.await();
    expected = Expected.read(dir.resolve("expected.tsv"));
  }

  private static String bronze() {
    return dir.resolve("delta/dbo_orders").toString();
  }

  private static String facts() {
    return dir.resolve("delta/facts").toString();
  }

  private static String control() {
    return dir.resolve("delta/table_finalization").toString();
  }

  // ---- what the source said, and the batches it makes -----------------------------------------

  /** A change row of the source: {@code lsn seqval op command_id commit_ts order_id ...}. */
  private record Change(List<String> fields) {
    String lsn() {
      return fields.get(0);
    }

    int operation() {
      return Integer.parseInt(fields.get(2));
    }

    int orderId() {
      return Integer.parseInt(fields.get(5));
    }
  }

  /** A batch: the LSNs of its commits, its end (the last commit) and the end's commit time. */
  private record Batch(int id, List<String> commitLsns, String endLsn, String endTime) {}

  /** The contents of {@code expected.tsv}, as {@code SampleJob} documents them. */
  private record Expected(
      int maxCommitsPerBatch,
      String s,
      String sTime,
      List<List<String>> tableRead,
      List<String[]> commits,
      List<Change> changes) {
    static Expected read(Path file) throws IOException {
      int max = -1;
      String s = null;
      String sTime = null;
      List<List<String>> rows = new ArrayList<>();
      List<String[]> commits = new ArrayList<>();
      List<Change> changes = new ArrayList<>();
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        String[] f = line.split("\t", -1);
        List<String> rest = Arrays.asList(f).subList(1, f.length);
        switch (f[0]) {
          case "max_commits_per_batch" -> max = Integer.parseInt(f[1]);
          case "snapshot" -> {
            s = f[1];
            sTime = f[2];
          }
          case "row" -> rows.add(rest);
          case "commit" -> commits.add(new String[] {f[1], f[2]});
          case "change" -> changes.add(new Change(rest));
          default -> throw new IllegalStateException("Unknown line in " + file + ": " + line);
        }
      }
      return new Expected(max, s, sTime, rows, commits, changes);
    }

    /** The commits after S, {@link #maxCommitsPerBatch} a batch, numbered from 0. */
    List<Batch> batches() {
      List<Batch> batches = new ArrayList<>();
      for (int from = 0; from < commits.size(); from += maxCommitsPerBatch) {
        List<String[]> part =
            commits.subList(from, Math.min(commits.size(), from + maxCommitsPerBatch));
        String[] end = part.get(part.size() - 1);
        batches.add(
            new Batch(batches.size(), part.stream().map(c -> c[0]).toList(), end[0], end[1]));
      }
      return batches;
    }

    int batchOf(String lsn) {
      for (Batch b : batches()) {
        if (b.commitLsns().contains(lsn)) {
          return b.id();
        }
      }
      throw new IllegalStateException(lsn + " is no commit after S");
    }

    List<Change> changesOf(Batch batch) {
      return changes.stream().filter(c -> batch.commitLsns().contains(c.lsn())).toList();
    }
  }

  // ---- rendering rows for comparison ------------------------------------------------------------

  private static final String NULL = "\\N";

  /** A value as {@code expected.tsv} writes it. */
  private static String text(Object value) {
    if (value == null) {
      return NULL;
    }
    if (value instanceof BigDecimal) {
      return ((BigDecimal) value).toPlainString();
    }
    return value.toString();
  }

  /** A source {@code datetime2(7)} value as bronze keeps it: truncated to microseconds. */
  private static String micros(String value) {
    return value.equals(NULL)
        ? NULL
        : LocalDateTime.parse(value).truncatedTo(ChronoUnit.MICROS).toString();
  }

  private static String line(Object... values) {
    return Arrays.stream(values).map(JobTablesTest::text).collect(Collectors.joining(" | "));
  }

  private static List<String> lines(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row row : rows) {
      Object[] values = new Object[row.size()];
      for (int i = 0; i < row.size(); i++) {
        values[i] = row.get(i);
      }
      out.add(line(values));
    }
    out.sort(null);
    return out;
  }

  private static List<Row> read(String table, String columns) {
    return spark.sql("SELECT " + columns + " FROM delta.`" + table + "`").collectAsList();
  }

  private static Row detail(String table) {
    return spark.sql("DESCRIBE DETAIL delta.`" + table + "`").first();
  }

  private static Map<String, String> properties(String table) {
    Row detail = detail(table);
    return JavaConverters.mapAsJavaMap(detail.getMap(detail.fieldIndex("properties")));
  }

  private static String description(String table) {
    Row detail = detail(table);
    return detail.getString(detail.fieldIndex("description"));
  }

  /** Each field as {@code name TYPE nullable}. */
  private static List<String> described(StructType schema) {
    return Arrays.stream(schema.fields())
        .map(f -> f.name() + " " + f.dataType().sql() + " " + f.nullable())
        .toList();
  }

  private static Optional<String> comment(StructField field) {
    return field.getComment().isDefined()
        ? Optional.of(field.getComment().get())
        : Optional.empty();
  }

  // ---- tests ------------------------------------------------------------------------------------

  @Test
  void theSourceSaidWhatSampleJobDocuments() {
    assertEquals(2, expected.maxCommitsPerBatch());
    assertEquals(LSN + "0021", expected.s());
    assertEquals("2026-09-28T13:52", expected.sTime());
    assertEquals(
        List.of("1", "2", "5", "6", "7", "8", "9"),
        expected.tableRead().stream().map(r -> r.get(0)).toList());
    assertEquals(
        List.of(LSN + "0031", LSN + "0041", LSN + "0051", LSN + "0061", LSN + "0071"),
        expected.commits().stream().map(c -> c[0]).toList());
    assertEquals(
        List.of("6:2", "7:2", "8:2", "1:3", "1:4", "4:1", "9:2", "6:3", "6:4"),
        expected.changes().stream().map(c -> c.orderId() + ":" + c.operation()).toList());
  }

  @Test
  void bronzeHoldsTheSnapshotStampedSAndEveryChangeAfterItOnceInItsBatch() {
    List<String> want = new ArrayList<>();
    for (List<String> r : expected.tableRead()) {
      // _capture_instance .. _commit_ts, order_id, status, amount, updated_at, _batch_id,
      // _snapshot, _chunk
      want.add(
          line(
              CI,
              expected.s(),
              null,
              0,
              null,
              expected.sTime(),
              r.get(0),
              r.get(1),
              r.get(2),
              micros(r.get(3)),
              null,
              expected.s(),
              null));
    }
    for (Change c : expected.changes()) {
      List<String> f = c.fields();
      want.add(
          line(
              CI,
              f.get(0),
              f.get(1),
              f.get(2),
              f.get(3),
              f.get(4),
              f.get(5),
              f.get(6),
              f.get(7),
              micros(f.get(8)),
              expected.batchOf(c.lsn()),
              null,
              null));
    }
    want.sort(null);

    List<Row> rows =
        read(
            bronze(),
            "_capture_instance, _start_lsn, _seqval, _operation, _command_id, _commit_ts,"
                + " order_id, status, amount, updated_at, _batch_id, _snapshot, _chunk");

    assertEquals(want, lines(rows));
    assertEquals(
        List.of(
            line(LSN + "0021", NULL, 0, 1, NULL, LSN + "0021"),
            line(LSN + "0021", NULL, 0, 2, NULL, LSN + "0021"),
            line(LSN + "0021", NULL, 0, 5, NULL, LSN + "0021"),
            line(LSN + "0021", NULL, 0, 6, NULL, LSN + "0021"),
            line(LSN + "0021", NULL, 0, 7, NULL, LSN + "0021"),
            line(LSN + "0021", NULL, 0, 8, NULL, LSN + "0021"),
            line(LSN + "0021", NULL, 0, 9, NULL, LSN + "0021"),
            line(LSN + "0031", LSN + "0032", 2, 6, 0, NULL),
            line(LSN + "0031", LSN + "0033", 2, 7, 0, NULL),
            line(LSN + "0031", LSN + "0034", 2, 8, 0, NULL),
            line(LSN + "0041", LSN + "0042", 3, 1, 0, NULL),
            line(LSN + "0041", LSN + "0042", 4, 1, 0, NULL),
            line(LSN + "0051", LSN + "0052", 1, 4, 1, NULL),
            line(LSN + "0051", LSN + "0053", 2, 9, 1, NULL),
            line(LSN + "0061", LSN + "0062", 3, 6, 1, NULL),
            line(LSN + "0061", LSN + "0062", 4, 6, 1, NULL)),
        lines(rows.stream().map(r -> select(r, 1, 2, 3, 6, 10, 11)).toList()),
        "(_start_lsn, _seqval, _operation, order_id, _batch_id, _snapshot)");
    Row update =
        rows.stream().filter(r -> r.getInt(6) == 6 && r.getInt(3) == 4).findFirst().orElseThrow();
    assertEquals("paid", update.getString(7));
    assertEquals(new BigDecimal("65.25"), update.getDecimal(8));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 54, 59, 0),
        update.get(9),
        "datetime2(7) truncated to microseconds");
  }

  /** The row of {@code row}'s fields at these positions. */
  private static Row select(Row row, int... fields) {
    return RowFactory.create(Arrays.stream(fields).mapToObj(row::get).toArray());
  }

  @Test
  void bronzeSchemaIsTypedAndOnlyItsMetadataColumnsHaveComments() {
    StructType schema = spark.read().format("delta").load(bronze()).schema();

    assertEquals(
        List.of(
            "_capture_instance STRING false",
            "_start_lsn STRING false",
            "_seqval STRING true",
            "_operation INT false",
            "_command_id INT true",
            "_commit_ts TIMESTAMP_NTZ false",
            "order_id INT true",
            "status STRING true",
            "amount DECIMAL(18,2) true",
            "updated_at TIMESTAMP_NTZ true",
            "_batch_id INT true",
            "_snapshot STRING true",
            "_chunk INT true"),
        described(schema));
    Map<String, String> commentStarts =
        Map.of(
            "_capture_instance", "SQL Server capture instance",
            "_start_lsn", "__$start_lsn: commit LSN",
            "_seqval", "__$seqval:",
            "_operation", "0 snapshot row, 1 delete, 2 insert",
            "_command_id", "__$command_id:",
            "_commit_ts", "Commit time of _start_lsn",
            "_batch_id", "Batch that wrote the row",
            "_snapshot", "On snapshot rows: the LSN S",
            "_chunk", "Chunk number");
    for (StructField field : schema.fields()) {
      Optional<String> comment = comment(field);
      if (field.name().startsWith("_")) {
        assertTrue(comment.isPresent(), field.name() + " has a comment");
        assertThat(field.name(), comment.get(), startsWith(commentStarts.get(field.name())));
      } else {
        assertFalse(comment.isPresent(), field.name() + " has no comment: " + comment);
      }
    }
  }

  @Test
  void everyTableHasItsKindVersionAndDescription() {
    Map<String, String> bronze = properties(bronze());
    Map<String, String> facts = properties(facts());
    Map<String, String> control = properties(control());

    assertEquals("bronze", bronze.get("mssql_cdc.table_kind"));
    assertEquals("1", bronze.get("mssql_cdc.schema_version"));
    assertEquals("facts", facts.get("mssql_cdc.table_kind"));
    assertEquals("1", facts.get("mssql_cdc.schema_version"));
    assertEquals("control", control.get("mssql_cdc.table_kind"));
    assertEquals("3", control.get("mssql_cdc.schema_version"));
    assertThat(
        description(bronze()),
        startsWith(
            "Append-only SQL Server CDC change log: one row per change (an update is two rows,"
                + " _operation 3 then 4) plus snapshot rows (_operation 0"));
    assertThat(description(facts()), startsWith("One row per micro-batch of a CDC stream"));
    assertThat(
        description(control()), startsWith("Completeness verdict per CDC-fed table: every period"));
  }

  @Test
  void eachBronzeVersionAddsExactlyOneBatchUnderItsTransactionId() {
    // What each data file of the table holds: "batch <b>" or "snapshot <S>", with its rows.
    Map<String, Map<String, Long>> fileContents = new HashMap<>();
    for (Row r :
        spark
            .sql(
                "SELECT _metadata.file_name, coalesce('batch ' || _batch_id, 'snapshot ' ||"
                    + " _snapshot), count(*) FROM delta.`"
                    + bronze()
                    + "` GROUP BY 1, 2")
            .collectAsList()) {
      fileContents
          .computeIfAbsent(r.getString(0), k -> new TreeMap<>())
          .put(r.getString(1), r.getLong(2));
    }
    // Each version of the log: its operation, what its added files hold, its transaction ids.
    List<String> versions = new ArrayList<>();
    scala.collection.Iterator<Tuple2<Object, scala.collection.Seq<Action>>> log =
        DeltaLog.forTable(spark, bronze()).getChanges(0L, true);
    while (log.hasNext()) {
      Tuple2<Object, scala.collection.Seq<Action>> version = log.next();
      String operation = null;
      Map<String, Long> added = new TreeMap<>();
      List<String> transactions = new ArrayList<>();
      for (Action action : JavaConverters.seqAsJavaList(version._2())) {
        assertFalse(action instanceof RemoveFile, "bronze is append-only: " + action);
        if (action instanceof CommitInfo) {
          operation = ((CommitInfo) action).operation();
        } else if (action instanceof AddFile) {
          String path = ((AddFile) action).path();
          Map<String, Long> contents = fileContents.get(path.substring(path.lastIndexOf('/') + 1));
          assertTrue(contents != null, path + " is in the table");
          contents.forEach((group, rows) -> added.merge(group, rows, Long::sum));
        } else if (action instanceof SetTransaction) {
          SetTransaction txn = (SetTransaction) action;
          transactions.add(txn.appId() + "=" + txn.version());
        }
      }
      versions.add(version._1() + " " + operation + " " + added + " " + transactions);
    }

    // Versions 0 and 1 create the table (Kernel's CREATE TABLE, then the table comment); then the
    // snapshot (transaction id (app id#snapshot, 0)); then one version per batch with rows, with
    // the transaction id
    // (app id, batch). A batch without rows writes no bronze commit.
    List<String> want = new ArrayList<>();
    want.add("0 CREATE TABLE {} []");
    want.add("1 Manual Update {} []");
    want.add(
        "2 WRITE {snapshot "
            + expected.s()
            + "="
            + expected.tableRead().size()
            + "} ["
            + CI
            + "#snapshot=0]");
    for (Batch b : expected.batches()) {
      int rows = expected.changesOf(b).size();
      if (rows > 0) {
        want.add(
            want.size() + " WRITE {batch " + b.id() + "=" + rows + "} [" + CI + "=" + b.id() + "]");
      }
    }
    assertEquals(want, versions);
    assertEquals(
        List.of(
            "0 CREATE TABLE {} []",
            "1 Manual Update {} []",
            "2 WRITE {snapshot " + LSN + "0021=7} [" + CI + "#snapshot=0]",
            "3 WRITE {batch 0=5} [" + CI + "=0]",
            "4 WRITE {batch 1=4} [" + CI + "=1]"),
        versions,
        "the idle entry's batch 2 wrote no bronze commit");
    assertEquals(
        7L,
        spark
            .sql("SELECT count(*) FROM delta.`" + bronze() + "` VERSION AS OF 2")
            .first()
            .getLong(0),
        "time travel to the snapshot's version sees the snapshot alone");
  }

  @Test
  void factsHoldOneRowPerBatchAndTheBootstrapEvent() {
    List<String> want = new ArrayList<>();
    for (Batch b : expected.batches()) {
      List<Change> rows = expected.changesOf(b);
      List<String> lsns = rows.stream().map(Change::lsn).sorted().toList();
      Map<String, String> timeOf = new HashMap<>();
      for (String[] c : expected.commits()) {
        timeOf.put(c[0], c[1]);
      }
      String min = lsns.isEmpty() ? null : lsns.get(0);
      String max = lsns.isEmpty() ? null : lsns.get(lsns.size() - 1);
      want.add(
          line(
              CI,
              b.id(),
              rows.size(),
              min,
              max,
              min == null ? null : timeOf.get(min),
              max == null ? null : timeOf.get(max),
              rows.stream().filter(c -> c.operation() == 1).count(),
              rows.stream().filter(c -> c.operation() == 2).count(),
              rows.stream().filter(c -> c.operation() == 4).count(),
              null,
              b.endLsn(),
              b.endTime(),
              null,
              bronze()));
    }
    want.add(
        line(
            CI,
            null,
            expected.tableRead().size(),
            expected.s(),
            expected.s(),
            null,
            null,
            null,
            null,
            null,
            "bootstrap",
            expected.s(),
            expected.sTime(),
            "whole snapshot of " + CI,
            bronze()));
    // The whole bootstrap's full open row, written before it read (the mode lock, docs/behaviour.md
    // §6.10).
    want.add(
        line(
            CI,
            null,
            0,
            expected.s(),
            expected.s(),
            expected.sTime(),
            expected.sTime(),
            null,
            null,
            null,
            "snapshot_open",
            null,
            null,
            "{\"mode\":\"full\",\"kind\":\"bootstrap\",\"keys\":[\"order_id\"],\"plan\":null,"
                + "\"generation\":0,\"lost_from_ts\":null,\"lost_to_ts\":null,\"capture_instance\":\"dbo_orders\",\"target_id\":\""
                + detail(bronze()).getString(detail(bronze()).fieldIndex("id"))
                + "\"}",
            bronze()));
    want.sort(null);

    List<String> got =
        lines(
            read(
                facts(),
                "app_id, batch_id, rows, min_lsn, max_lsn, min_commit_ts, max_commit_ts,"
                    + " deletes, inserts, updates, event, end_lsn, end_commit_ts, detail,"
                    + " target"));

    assertEquals(want, got);
    assertEquals(
        List.of(
            line(0, 5, LSN + "0041", null),
            line(1, 4, LSN + "0061", null),
            line(2, 0, LSN + "0071", null),
            line(null, 0, null, "snapshot_open"),
            line(null, 7, LSN + "0021", "bootstrap")),
        lines(read(facts(), "batch_id, rows, end_lsn, event")));
    StructType schema = spark.read().format("delta").load(facts()).schema();
    assertEquals(29, schema.fields().length);
    for (StructField field : schema.fields()) {
      assertTrue(comment(field).filter(c -> !c.isBlank()).isPresent(), field.name());
    }
    assertEquals(
        List.of(
            "app_id STRING true",
            "batch_id BIGINT true",
            "rows BIGINT true",
            "min_commit_ts TIMESTAMP_NTZ true",
            "source_rtt_ms DOUBLE true",
            "end_commit_ts TIMESTAMP_NTZ true"),
        described(schema).stream()
            .filter(
                d ->
                    List.of(
                            "app_id",
                            "batch_id",
                            "rows",
                            "min_commit_ts",
                            "source_rtt_ms",
                            "end_commit_ts")
                        .contains(d.substring(0, d.indexOf(' '))))
            .toList());
    Map<String, Object> transactions =
        JavaConverters.mapAsJavaMap(
            DeltaLog.forTable(spark, facts()).unsafeVolatileSnapshot().transactions());
    // The facts transactions are named after the bronze table's id, as delta-spark reads it.
    String bronzeId = DeltaLog.forTable(spark, bronze()).unsafeVolatileSnapshot().metadata().id();
    assertEquals(
        Map.of(CI + "#facts@" + bronzeId, 2L, CI + "#events@" + bronzeId, 0L), transactions);
  }

  @Test
  void controlHoldsTheTargetsVerdictAtTheHourOfTheLastBatchEnd() {
    String[] last = expected.commits().get(expected.commits().size() - 1);
    LocalDateTime hour = LocalDateTime.parse(last[1]).truncatedTo(ChronoUnit.HOURS);

    List<String> got =
        lines(
            read(
                control(),
                "table_name, finalized_until, end_lsn, end_commit_ts, applied_lsn,"
                    + " snapshot_lsn, open_snapshot_lsn, snapshot_wave"));

    assertEquals(List.of(line(bronze(), hour, last[0], last[1], null, null, null, null)), got);
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 0), hour);
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 55), LocalDateTime.parse(last[1]));
    StructType schema = spark.read().format("delta").load(control()).schema();
    assertEquals("table_name STRING false", described(schema).get(0));
    assertEquals("finalized_until TIMESTAMP_NTZ true", described(schema).get(1));
    for (StructField field : schema.fields()) {
      assertTrue(comment(field).filter(c -> !c.isBlank()).isPresent(), field.name());
    }
  }
}
