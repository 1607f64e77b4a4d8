package org.lakecdc.io.mssqlcdc.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.read.Readers.bounded;
import static org.lakecdc.io.mssqlcdc.read.Readers.read;
import static org.lakecdc.io.mssqlcdc.read.Readers.source;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.DoFn.ProcessContinuation;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.RecordingReceiver;
import org.lakecdc.io.mssqlcdc.Resolved;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.lsn.LsnRange;
import org.lakecdc.io.mssqlcdc.lsn.LsnRangeTracker;

/**
 * Section 4 of docs/scenarios.md on the simulator, through the splittable DoFn: DDL in a batch's
 * range is checked before the batch's rows are read ({@code schemaChangePolicy}, docs/options.md,
 * docs/tables.md "Schema evolution of bronze"). "Planning (a, b)" of the reference is reading the
 * restriction {@code (a, b]}; a batch that fails emits nothing. The {@code schema_change} facts
 * events of these scenarios are written by the committer (transforms {@code BatchFacts}), not by
 * the reader.
 */
class SchemaChangeTest {
  private static final String ALTER_AMOUNT =
      "ALTER TABLE dbo.orders ALTER COLUMN amount decimal(20,4)";
  private static final String ADD_NOTE = "ALTER TABLE dbo.orders ADD note varchar(10) NULL";
  private static final String DROP_STATUS = "ALTER TABLE dbo.orders DROP COLUMN status";

  @TempDir Path dir;

  /** Reads the restriction {@code (after, upTo]} into {@code out}, which keeps what was emitted. */
  private static void process(ReadChangesDoFn fn, Lsn after, Lsn upTo, RecordingReceiver out) {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(after.increment(), upTo));
    ProcessContinuation continuation =
        fn.processElement(
            CI, tracker, new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE), out);
    assertFalse(continuation.shouldResume());
    tracker.checkDone();
  }

  private static RecordingReceiver process(ReadChangesDoFn fn, Lsn after, Lsn upTo) {
    RecordingReceiver out = new RecordingReceiver();
    process(fn, after, upTo, out);
    return out;
  }

  private static List<Integer> orderIds(RecordingReceiver out) {
    return out.values(MssqlCdcIO.CHANGES).stream().map(r -> r.getInt32("order_id")).toList();
  }

  /** C050's DDL (at ...031 after c0..c2) and commits c3, c4 with amount 1.2345. */
  private static Lsn alterAmountAndCommitTwo(FakeSqlServer db) {
    Lsn ddl = db.ddl(ORDERS, ALTER_AMOUNT, minutes(3));
    insertOrder(db, minutes(3), 3, "new", "1.2345");
    insertOrder(db, minutes(4), 4, "new", "1.2345");
    return ddl;
  }

  @Test
  void c050ATypeChangeFailsTheBatchBeforeItReadsAndARestartReInfersAndGoesOn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    ReadChangesDoFn r = bounded(read(db));
    Lsn ddl = alterAmountAndCommitTwo(db);
    assertEquals(lsn(3), ddl, "the DDL takes ...031, with no mapping entry");
    Lsn c2 = lsn(2);
    Lsn c4 = lsn(5);

    assertEquals(List.of(1, 2), orderIds(process(r, lsn(0), c2)));

    RecordingReceiver failed = new RecordingReceiver();
    SchemaChangedError e = assertThrows(SchemaChangedError.class, () -> process(r, c2, c4, failed));
    assertTrue(e.getMessage().contains("amount DECIMAL(20,4) (read as decimal"), e.getMessage());
    assertEquals(
        "Captured column(s) no longer fit the query's schema after DDL in the batch"
            + " 0x0000002A000001000022..0x0000002A000001000051: amount DECIMAL(20,4) (read as"
            + " decimal(18,2)). DDL: 0x0000002A000001000031 ALTER TABLE dbo.orders ALTER COLUMN"
            + " amount decimal(20,4). Nothing of this batch was read. Restart the query to"
            + " re-infer the schema, or declare 'columns' (withColumns / --columns) with types that"
            + " hold the new ones; for a widening, enable type widening on the bronze table first"
            + " (ALTER TABLE <bronze> SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')).",
        e.getMessage());
    assertEquals(List.of(), failed.values(MssqlCdcIO.CHANGES));
    assertEquals(List.of(), failed.values(MssqlCdcIO.BATCHES));

    // The decision is not retried away: the replay fails the same way.
    assertThrows(SchemaChangedError.class, () -> process(r, c2, c4));

    // A restarted read infers DECIMAL(20,4) and goes on through the same DDL.
    ReadChangesDoFn restarted = bounded(read(db).withStartingLsn(StartingLsn.after(c2)));
    RecordingReceiver after = process(restarted, c2, c4);
    assertEquals(
        List.of("1.2345", "1.2345"),
        after.values(MssqlCdcIO.CHANGES).stream()
            .map(row -> row.getDecimal("amount").toPlainString())
            .toList());
    assertEquals(1, after.values(MssqlCdcIO.BATCHES).size());
  }

  @Test
  void c050WithDeclaredColumnsTheCapturedTypesOfTheFirstPlanningAreExpected() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    // The declared DECIMAL(30,4) holds the new type, but the check compares with the captured
    // type seen when the read was built (docs/tables.md "Schema evolution of bronze"):
    // DECIMAL(18,2).
    ReadChangesDoFn declared =
        bounded(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    source(db).withColumns("order_id INT, amount DECIMAL(30,4)")));
    ReadChangesDoFn withoutAmount =
        bounded(
            MssqlCdcIO.read()
                .withSourceConfiguration(source(db).withColumns("order_id INT, status STRING")));
    alterAmountAndCommitTwo(db);
    SchemaChangedError e =
        assertThrows(SchemaChangedError.class, () -> process(declared, lsn(2), lsn(5)));
    assertTrue(
        e.getMessage().contains(": amount DECIMAL(20,4) (read as decimal(18,2)). DDL:"),
        e.getMessage());
    assertTrue(
        e.getMessage()
            .contains(
                "Update 'columns' (withColumns / --columns) to types that hold the new ones and"
                    + " restart the query"),
        e.getMessage());
    assertEquals(
        List.of(3, 4),
        orderIds(process(withoutAmount, lsn(2), lsn(5))),
        "a type change of a column the read does not read goes on");
  }

  @Test
  void c050AnAlteredTypeTheQueryStillHoldsGoesOn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 1);
    ReadChangesDoFn r = bounded(read(db));
    db.ddl(ORDERS, "ALTER TABLE dbo.orders ALTER COLUMN amount decimal(10,2)", minutes(1));
    insertOrder(db, minutes(1), 1, "new", "7.25");
    RecordingReceiver out = process(r, lsn(0), lsn(2));
    assertEquals(List.of(1), orderIds(out));
    assertEquals(
        new BigDecimal("7.25"), out.values(MssqlCdcIO.CHANGES).get(0).getDecimal("amount"));
  }

  @Test
  void c052AddAndDropColumnGoOnPolicyFailStopsAndAnUnknownPolicyIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn c0 = insertOrder(db, T0, 0, "new", "0.00");
    MssqlCdcIO.Read classifyRead = read(db);
    ReadChangesDoFn classify = bounded(classifyRead);
    ReadChangesDoFn fail =
        bounded(read(db).withSchemaChangePolicy(SchemaChangePolicy.parse("fail")));
    Lsn add = db.ddl(ORDERS, ADD_NOTE);
    Lsn drop = db.ddl(ORDERS, DROP_STATUS);
    Lsn c1 =
        db.transaction(minutes(1))
            .insert(ORDERS, Map.of("order_id", 1, "amount", new BigDecimal("1.00")))
            .commit();
    assertEquals(List.of(lsn(1), lsn(2), lsn(3)), List.of(add, drop, c1));

    RecordingReceiver out = process(classify, c0, c1);
    List<Row> rows = out.values(MssqlCdcIO.CHANGES);
    assertEquals(1, rows.size());
    assertEquals(1, rows.get(0).getInt32("order_id"));
    assertNull(rows.get(0).getString("status"));

    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(
              "DDL on capture instance dbo_orders at 0x0000002A000001000011 (after the commit at"
                  + " 2026-09-28T13:50:00Z) goes on: the query's schema still holds every captured"
                  + " column it reads: "
                  + ADD_NOTE,
              "DDL on capture instance dbo_orders at 0x0000002A000001000021 (after the commit at"
                  + " 2026-09-28T13:50:00Z) goes on: the query's schema still holds every captured"
                  + " column it reads: "
                  + DROP_STATUS),
          SchemaGuard.checkDdl(client, Resolved.spec(classifyRead), List.of(CI), c0, c1));
    }

    RecordingReceiver failed = new RecordingReceiver();
    SchemaChangedError e =
        assertThrows(SchemaChangedError.class, () -> process(fail, c0, c1, failed));
    assertEquals(
        "DDL on the table of capture instance dbo_orders in the batch"
            + " 0x0000002A000001000002..0x0000002A000001000031: 0x0000002A000001000011 "
            + ADD_NOTE
            + " (the first of 2). The read stops at any DDL with schemaChangePolicy=fail; nothing"
            + " of this batch was read. The replay holds the same DDL: check the change, then"
            + " restart the query with schemaChangePolicy=classify to go on.",
        e.getMessage());
    assertEquals(List.of(), failed.values(MssqlCdcIO.CHANGES));
    assertEquals(List.of(), failed.values(MssqlCdcIO.BATCHES));
    // A read that starts after the DDL (its stored position is the DDL's LSN) does not see it.
    ReadChangesDoFn afterDrop =
        bounded(
            read(db)
                .withSchemaChangePolicy(SchemaChangePolicy.parse("fail"))
                .withStartingLsn(StartingLsn.after(drop)));
    assertEquals(
        List.of(1),
        orderIds(process(afterDrop, drop, c1)),
        "DDL at or before where the read starts is not in its first batch's range");

    IllegalArgumentException ignore =
        assertThrows(
            IllegalArgumentException.class,
            () -> read(db).withSchemaChangePolicy(SchemaChangePolicy.parse("ignore")));
    assertEquals(
        "schemaChangePolicy must be 'classify' or 'fail', not 'ignore'", ignore.getMessage());
    assertTrue(ignore.getMessage().contains("schemaChangePolicy must be"));
    assertEquals(SchemaChangePolicy.FAIL, SchemaChangePolicy.parse(" FAIL "));
    assertEquals(SchemaChangePolicy.CLASSIFY, Resolved.spec(read(db)).schemaChangePolicy());
  }

  /**
   * A split part whose first LSN lies after a DDL that follows the previous part's last commit: the
   * DDL is in no batch of the earlier part (which ends at that commit), so the later part's first
   * batch checks it, from the previous batch's end, as its facts DDL list reports it.
   */
  @Test
  void ddlBetweenThePreviousPartsLastCommitAndAPartsFirstLsnIsCheckedByThatPart() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 0, "new", "0.00");
    Lsn c1 = insertOrder(db, minutes(1), 1, "new", "1.00");
    Lsn ddl = db.ddl(ORDERS, ADD_NOTE, minutes(1));
    Lsn c2 = insertOrder(db, minutes(2), 2, "new", "2.00");
    assertTrue(c1.isBefore(ddl) && ddl.isBefore(c2), "the DDL lies between the two commits");
    // The part starts right after the DDL, as a split at any LSN of (c1, c2] may.
    LsnRange part = LsnRange.closed(ddl.increment(), c2).withFirstBatch(1);

    ReadChangesDoFn fail =
        bounded(read(db).withSchemaChangePolicy(SchemaChangePolicy.parse("fail")));
    RecordingReceiver failed = new RecordingReceiver();
    LsnRangeTracker tracker = new LsnRangeTracker(part);
    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                fail.processElement(
                    CI,
                    tracker,
                    new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE),
                    failed));
    assertEquals(
        "DDL on the table of capture instance dbo_orders in the batch "
            + c1.increment()
            + ".."
            + c2
            + ": "
            + ddl
            + " "
            + ADD_NOTE
            + ". The read stops at any DDL with schemaChangePolicy=fail; nothing of this batch was"
            + " read. The replay holds the same DDL: check the change, then restart the query with"
            + " schemaChangePolicy=classify to go on.",
        e.getMessage());
    assertEquals(List.of(), failed.values(MssqlCdcIO.CHANGES));
    assertEquals(List.of(), failed.values(MssqlCdcIO.BATCHES));

    // With classify the batch goes on, and its facts DDL list names the same DDL.
    ReadChangesDoFn classify = bounded(read(db));
    RecordingReceiver out = new RecordingReceiver();
    LsnRangeTracker again = new LsnRangeTracker(part);
    classify.processElement(
        CI, again, new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE), out);
    again.checkDone();
    assertEquals(List.of(2), orderIds(out));
    List<ChangeBatch> batches = out.values(MssqlCdcIO.BATCHES);
    assertEquals(1, batches.size());
    assertEquals(
        List.of(ddl), batches.get(0).source().ddl().stream().map(BatchSource.Ddl::lsn).toList());
  }
}
