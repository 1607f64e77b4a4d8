package org.lakecdc.io.mssqlcdc.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS_COLUMNS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS_COLUMN_NAMES;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.V2;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;
import static org.lakecdc.io.mssqlcdc.read.Readers.bounded;
import static org.lakecdc.io.mssqlcdc.read.Readers.read;
import static org.lakecdc.io.mssqlcdc.read.Readers.source;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.beam.sdk.transforms.DoFn.ProcessContinuation;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.RecordingReceiver;
import org.lakecdc.io.mssqlcdc.Resolved;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.lsn.LsnRange;
import org.lakecdc.io.mssqlcdc.lsn.LsnRangeTracker;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Section 3 of docs/scenarios.md on the simulator, through the splittable DoFn: a capture instance
 * newer than the read's schema (the switch check, docs/sql-server.md "Switching to a new capture
 * instance") and a disabled configured instance. "Planning (a, b)" of the reference is reading the
 * restriction {@code [a + 1, b]}: the reader plans each batch right before reading it, and a batch
 * that fails its checks emits nothing.
 */
class CaptureInstanceSwitchTest {
  /** The columns of {@value FakeScenarios#CI} as declared {@code columns} (COLUMNS). */
  private static final String COLUMNS =
      "order_id INT, status STRING, amount DECIMAL(18,2), updated_at TIMESTAMP_NTZ";

  private static final Pattern REACHES_V2 =
      Pattern.compile("reaches capture instance 'dbo_orders_v2' .* note");

  @TempDir Path dir;

  /** Processes {@code range} into {@code out}; what was emitted stays in {@code out} on failure. */
  private static void process(ReadChangesDoFn fn, LsnRange range, RecordingReceiver out) {
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    ProcessContinuation continuation =
        fn.processElement(
            CI, tracker, new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE), out);
    assertFalse(continuation.shouldResume());
    tracker.checkDone();
  }

  private static RecordingReceiver process(ReadChangesDoFn fn, LsnRange range) {
    RecordingReceiver out = new RecordingReceiver();
    process(fn, range, out);
    return out;
  }

  private static List<Integer> orderIds(RecordingReceiver out) {
    return out.values(MssqlCdcIO.CHANGES).stream().map(r -> r.getInt32("order_id")).toList();
  }

  private static List<String> instances(RecordingReceiver out) {
    return out.values(MssqlCdcIO.CHANGES).stream()
        .map(r -> r.getString("_capture_instance"))
        .distinct()
        .toList();
  }

  /**
   * {@code dbo.orders} plus {@code note varchar(20)}; {@value FakeScenarios#CI} captures COLUMNS
   * (without note); orders 0..count-1 inserted with note "n{i}" at T0+i minutes.
   */
  private static FakeSqlServer notedOrders(Path dir, int count) {
    FakeSqlServer db = FakeSqlServer.open(dir);
    List<ColumnDefinition> columns = new ArrayList<>(ORDERS_COLUMNS);
    columns.add(ColumnDefinition.of("note", "varchar(20)"));
    db.createTable(ORDERS, columns, List.of("order_id"));
    db.enableCdc(
        ORDERS,
        CaptureOptions.defaults().withCapturedColumns(ORDERS_COLUMN_NAMES).withCreateTime(T0));
    for (int i = 0; i < count; i++) {
      insertNoted(db, i);
    }
    return db;
  }

  private static Lsn insertNoted(FakeSqlServer db, int i) {
    Map<String, Object> row = order(i, "new", i + ".00");
    row.put("note", "n" + i);
    return db.transaction(minutes(i)).insert(ORDERS, row).commit();
  }

  /** Enables {@value FakeScenarios#V2} capturing COLUMNS plus note, at T0+{@code at} minutes. */
  private static void addV2WithNote(FakeSqlServer db, int at) {
    List<String> v2 = new ArrayList<>(ORDERS_COLUMN_NAMES);
    v2.add("note");
    db.enableCdc(
        ORDERS,
        CaptureOptions.defaults().withName(V2).withCapturedColumns(v2).withCreateTime(minutes(at)));
  }

  @Test
  void c037ANewerInstanceWithNewColumnsStopsAnInferredReadAtItsStart() {
    FakeSqlServer db = notedOrders(dir, 3);
    ReadChangesDoFn inferred = bounded(read(db));
    MssqlCdcIO.Read declaredRead =
        MssqlCdcIO.read().withSourceConfiguration(source(db).withColumns(COLUMNS));
    ReadChangesDoFn declared = bounded(declaredRead);
    ReadChangesDoFn inferredByTwo = bounded(read(db).withMaxCommitsPerBatch(2));
    addV2WithNote(db, 3);
    Lsn s = lsn(3);
    insertNoted(db, 3);
    insertNoted(db, 4);

    // R1 reads (c0, c2).
    assertEquals(List.of(1, 2), orderIds(process(inferred, LsnRange.closed(lsn(1), lsn(2)))));

    // R1 planning (c2, c4) fails before anything at or past S is read.
    RecordingReceiver failed = new RecordingReceiver();
    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () -> process(inferred, LsnRange.closed(lsn(3), lsn(4)), failed));
    assertTrue(REACHES_V2.matcher(e.getMessage()).find(), e.getMessage());
    assertTrue(e.getMessage().contains("(start LSN " + s + ")"), e.getMessage());
    assertTrue(e.getMessage().contains("it adds column(s) note STRING"), e.getMessage());
    assertTrue(e.getMessage().contains("Restart the query"), e.getMessage());
    assertEquals(List.of(), failed.values(MssqlCdcIO.CHANGES));
    assertEquals(List.of(), failed.values(MssqlCdcIO.BATCHES));
    assertEquals(
        "The read reaches capture instance 'dbo_orders_v2' (start LSN 0x0000002A000001000031),"
            + " which the query's inferred schema does not account for: it adds column(s) note"
            + " STRING. Nothing from 0x0000002A000001000031 on was read (batch up to"
            + " 0x0000002A000001000041). Restart the query: it infers the schema again as the"
            + " union of the capture instances and resumes after the last batch written, reading"
            + " 'dbo_orders_v2' from 0x0000002A000001000031.",
        e.getMessage());

    // One call over (c0, c4] in batches of two commits: the batch before S is emitted, the one
    // crossing S fails whole.
    RecordingReceiver byTwo = new RecordingReceiver();
    assertThrows(
        SchemaChangedError.class,
        () -> process(inferredByTwo, LsnRange.closed(lsn(1), lsn(4)), byTwo));
    assertEquals(List.of(1, 2), orderIds(byTwo));
    assertEquals(
        List.of(lsn(2)),
        byTwo.values(MssqlCdcIO.BATCHES).stream().map(ChangeBatch::toLsn).toList());

    // One batch across S (older part, then the newer one): nothing of it is emitted.
    RecordingReceiver across = new RecordingReceiver();
    assertThrows(
        SchemaChangedError.class, () -> process(inferred, LsnRange.closed(lsn(1), lsn(4)), across));
    assertEquals(List.of(), across.values(MssqlCdcIO.CHANGES));

    // R2 (declared columns) follows v2 in place and does not read note.
    RecordingReceiver r2 = process(declared, LsnRange.closed(lsn(3), lsn(4)));
    assertEquals(List.of(3, 4), orderIds(r2));
    assertEquals(List.of(V2), instances(r2));
    assertFalse(r2.values(MssqlCdcIO.CHANGES).get(0).getSchema().hasField("note"));
    ReadSpec declaredSpec = Resolved.spec(declaredRead);
    List<String> warnings;
    try (CdcClient client = db.openClient()) {
      CaptureInstance v2 = client.captureInstances(V2).get(1);
      warnings =
          SchemaGuard.checkNewInstance(
              declaredSpec, v2, client.capturedColumns(V2), lsn(3), lsn(4));
    }
    assertEquals(
        List.of(
            "The read follows capture instance 'dbo_orders_v2' (start LSN 0x0000002A000001000031),"
                + " which captures column(s) note that 'columns' does not list: they are not read"
                + " (add them to 'columns' and restart to read them)"),
        warnings);

    // A restarted inferred read infers the union and reads the notes.
    ReadChangesDoFn restarted = bounded(read(db).withStartingLsn(StartingLsn.after(lsn(2))));
    RecordingReceiver after = process(restarted, restarted.initialRestriction(CI));
    assertEquals(
        List.of("n3", "n4"),
        after.values(MssqlCdcIO.CHANGES).stream().map(r -> r.getString("note")).toList());
  }

  @Test
  void c037ANewerInstanceTypingAColumnWiderThanTheInferredTypeStopsTheRead() {
    FakeSqlServer db = notedOrders(dir, 1);
    ReadSpec spec = Resolved.spec(read(db));
    CaptureInstance v2 =
        new CaptureInstance(
            V2, "dbo", "orders", Optional.of(lsn(5)), Optional.empty(), List.of("order_id"));
    List<CapturedColumn> columns =
        List.of(
            new CapturedColumn("order_id", 1, SqlServerType.parse("int"), false),
            new CapturedColumn("amount", 2, SqlServerType.parse("decimal(20,4)"), false),
            new CapturedColumn("total", 3, SqlServerType.parse("int"), true));
    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () -> SchemaGuard.checkNewInstance(spec, v2, columns, lsn(5), lsn(6)));
    assertTrue(
        e.getMessage()
            .contains(
                "reaches capture instance 'dbo_orders_v2' (start LSN 0x0000002A000001000051),"
                    + " which the query's inferred schema does not account for: it types amount"
                    + " DECIMAL(20,4) (read as decimal(18,2))."),
        e.getMessage());

    List<CapturedColumn> narrower =
        List.of(
            new CapturedColumn("order_id", 1, SqlServerType.parse("smallint"), false),
            new CapturedColumn("amount", 2, SqlServerType.parse("decimal(10,2)"), false));
    assertEquals(
        List.of(
            "The read follows capture instance 'dbo_orders_v2' (start LSN 0x0000002A000001000051),"
                + " which no longer captures status, updated_at: read as NULL from"
                + " 0x0000002A000001000051 on"),
        SchemaGuard.checkNewInstance(spec, v2, narrower, lsn(5), lsn(6)),
        "types the query's types hold, and columns no longer captured, go on");
  }

  @Test
  void c038AnInstanceReachedWithoutTheOlderOneIsCheckedTheSameWay() {
    // Without failOnDataLoss=false (no skipping in this reader), the equivalent: the older
    // instance is gone and the plan's first piece is already the newer instance.
    FakeSqlServer db = notedOrders(dir, 3);
    ReadChangesDoFn inferred = bounded(read(db));
    assertEquals(List.of(1), orderIds(process(inferred, LsnRange.closed(lsn(1), lsn(1)))));
    addV2WithNote(db, 3);
    insertNoted(db, 3);
    insertNoted(db, 4);
    db.disableCdc(CI);

    RecordingReceiver out = new RecordingReceiver();
    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () -> process(inferred, LsnRange.closed(lsn(3), lsn(4)), out));
    assertTrue(REACHES_V2.matcher(e.getMessage()).find(), e.getMessage());
    assertEquals(List.of(), out.values(MssqlCdcIO.CHANGES));

    // Planning (c1, c4) meets the gap first: c2 was held only by the disabled instance.
    DataLossError gap =
        assertThrows(
            DataLossError.class, () -> process(inferred, LsnRange.closed(lsn(2), lsn(4)), out));
    assertTrue(
        gap.getMessage().contains("or held only by capture instance 'dbo_orders', disabled"),
        gap.getMessage());
  }

  @Test
  void c039ADisabledConfiguredInstanceIsFollowedAndAGapBeforeItsSuccessorIsDataLoss() {
    FakeSqlServer db =
        FakeScenarios.switchScenario(dir, List.of("order_id", "status", "amount", "updated_at"));
    ReadChangesDoFn first = bounded(read(db));
    assertEquals(
        List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
        orderIds(process(first, first.initialRestriction(CI))));
    db.disableCdc(CI);
    Lsn c10 = db.transaction(minutes(10)).insert(ORDERS, order(10, "new", "10.00")).commit();

    // Running again, still configured as dbo_orders: one batch of one row, from v2.
    ReadChangesDoFn again = bounded(read(db).withStartingLsn(StartingLsn.after(lsn(9))));
    RecordingReceiver next = process(again, again.initialRestriction(CI));
    assertEquals(List.of(10), orderIds(next));
    assertEquals(List.of(V2), instances(next));
    assertEquals(
        List.of(1L), next.values(MssqlCdcIO.BATCHES).stream().map(ChangeBatch::rows).toList());
    assertEquals(c10, next.values(MssqlCdcIO.BATCHES).get(0).toLsn());

    // A new reader starting after c1: c2..c4 were held only by the disabled dbo_orders.
    ReadChangesDoFn fromC1 = bounded(read(db).withStartingLsn(StartingLsn.after(lsn(1))));
    DataLossError e =
        assertThrows(
            DataLossError.class,
            () -> process(fromC1, fromC1.initialRestriction(CI), new RecordingReceiver()));
    assertTrue(
        Pattern.compile("or held only by capture instance 'dbo_orders', disabled")
            .matcher(e.getMessage())
            .find(),
        e.getMessage());
    assertEquals(
        "dbo_orders_v2: change data from 0x0000002A000001000012 was purged by CDC cleanup before"
            + " reading of the range 0x0000002A000001000012..0x0000002A0000010000A1, or held only"
            + " by capture instance 'dbo_orders', disabled before the stream read them; the"
            + " capture instance's min_lsn is now 0x0000002A000001000051 (committed at"
            + " 2026-09-28T13:55:00Z). The changes in between are gone from cdc.dbo_orders_v2_CT:"
            + " a re-snapshot is required (onDataLoss=resnapshot takes one automatically into a new"
            + " generation, onDataLoss=skip skips ahead and records the gap; raise the CDC"
            + " retention so the stream keeps up).",
        e.getMessage());
    assertEquals(V2, e.captureInstance());

    // After cleanup of v2 up to c8, planning (c6, c9) names the cleanup first.
    db.cleanup(V2, lsn(8));
    ReadChangesDoFn fromC6 = bounded(read(db).withStartingLsn(StartingLsn.after(lsn(6))));
    DataLossError purged =
        assertThrows(
            DataLossError.class,
            () ->
                process(
                    fromC6, LsnRange.closed(lsn(6).increment(), lsn(9)), new RecordingReceiver()));
    assertTrue(
        Pattern.compile("^dbo_orders_v2: change data from .* purged by CDC cleanup")
            .matcher(purged.getMessage())
            .find(),
        purged.getMessage());
    assertTrue(purged.getMessage().contains("a re-snapshot is required"), purged.getMessage());
  }

  @Test
  void c039TheExplicitStartCheckNamesTheDisabledInstanceToo() {
    FakeSqlServer db =
        FakeScenarios.switchScenario(dir, List.of("order_id", "status", "amount", "updated_at"));
    db.disableCdc(CI);
    DataLossError e;
    try (CdcClient client = db.openClient()) {
      e = assertThrows(DataLossError.class, () -> StartingLsn.checkExplicit(client, CI, lsn(1)));
    }
    assertTrue(
        e.getMessage()
            .contains(
                "purged by cleanup, or held only by capture instance 'dbo_orders', disabled"
                    + " before the stream read them, or predate CDC on the table"),
        e.getMessage());
  }
}
