package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.readAll;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.readAllOrders;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/** What a commit writes to the change tables (docs/tables.md "Bronze", scenario C204). */
class ChangeRowsTest {
  @TempDir Path dir;

  private static List<Integer> operations(List<ChangeRow> rows) {
    return rows.stream().map(ChangeRow::operation).toList();
  }

  private static List<Integer> commandIds(List<ChangeRow> rows) {
    return rows.stream().map(ChangeRow::commandId).toList();
  }

  private static List<Lsn> seqvals(List<ChangeRow> rows) {
    return rows.stream().map(ChangeRow::seqval).toList();
  }

  private static Lsn plus(Lsn lsn, int n) {
    return Lsn.fromBigInteger(lsn.toBigInteger().add(java.math.BigInteger.valueOf(n)));
  }

  /** C204: insert, update, delete of order 1 in one commit. */
  private Lsn commitC204(FakeSqlServer db) {
    return db.transaction(T0)
        .insert(ORDERS, order(1, "new", "10.50"))
        .update(ORDERS, List.of(1), Map.of("status", "paid", "amount", new BigDecimal("12.25")))
        .delete(ORDERS, List.of(1))
        .commit();
  }

  @Test
  void updatePairSharesCommandIdAndSeqvalInStatementOrder() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn commit = commitC204(db);
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAllOrders(client);
      assertEquals(Lsn.parse("0x0000002A000001000001"), commit);
      assertEquals(List.of(2, 3, 4, 1), operations(rows));
      assertEquals(List.of(1, 2, 2, 4), commandIds(rows));
      assertEquals(
          List.of(plus(commit, 1), plus(commit, 2), plus(commit, 2), plus(commit, 4)),
          seqvals(rows));
      assertEquals(
          List.of(commit, commit, commit, commit), rows.stream().map(ChangeRow::startLsn).toList());
    }
  }

  @Test
  void updateImagesCarryTheValuesBeforeAndAfter() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitC204(db);
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAllOrders(client);
      assertEquals(Arrays.asList(1, "new", new BigDecimal("10.50"), null), rows.get(1).values());
      assertEquals(Arrays.asList(1, "paid", new BigDecimal("12.25"), null), rows.get(2).values());
      assertEquals(Arrays.asList(1, "paid", new BigDecimal("12.25"), null), rows.get(3).values());
      assertNotEquals(rows.get(0).seqval(), rows.get(1).seqval());
    }
  }

  @Test
  void updateOfAKeyColumnIsADeleteAndAnInsert() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 5, "new", "1.00");
    Lsn l1 = db.transaction(minutes(1)).update(ORDERS, List.of(5), Map.of("order_id", 6)).commit();
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAll(client, CI, List.of("order_id", "status"), l1, l1);
      assertEquals(List.of(1, 2), operations(rows));
      assertEquals(List.of(plus(l1, 1), plus(l1, 2)), seqvals(rows));
      assertEquals(List.of(5, "new"), rows.get(0).values());
      assertEquals(List.of(6, "new"), rows.get(1).values());
    }
    assertEquals(List.of(6), db.rows(ORDERS).stream().map(r -> r.get("order_id")).toList());
  }

  @Test
  void updateOfOnlyUncapturedColumnsWritesNoRowsAndNoMappingRow() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS, CaptureOptions.defaults().withCapturedColumns("order_id", "status"));
    Lsn l0 = insertOrder(db, T0, 1, "new", "1.00");
    Lsn l1 =
        db.transaction(minutes(1)).update(ORDERS, List.of(1), Map.of("amount", "2.00")).commit();
    try (CdcClient client = db.openClient()) {
      assertEquals(1, readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX).size());
      assertEquals(Optional.empty(), client.commit(l1));
      assertEquals(Optional.of(l0), client.maxLsn());
    }
    assertEquals(new BigDecimal("2.00"), db.rows(ORDERS).get(0).get("amount"));
  }

  @Test
  void computedColumnIsNullInEveryChangeRow() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.items",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("qty", "int"),
            ColumnDefinition.computed("twice", "int")),
        List.of("id"));
    db.enableCdc("dbo.items");
    db.transaction(T0)
        .insert("dbo.items", Map.of("id", 1, "qty", 2))
        .update("dbo.items", List.of(1), Map.of("qty", 3))
        .delete("dbo.items", List.of(1))
        .commit();
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows =
          readAll(client, "dbo_items", List.of("qty", "twice"), Lsn.ZERO, Lsn.MAX);
      assertEquals(List.of(2, 3, 4, 1), operations(rows));
      assertEquals(Arrays.asList(2, null), rows.get(0).values());
      assertEquals(Arrays.asList(2, null), rows.get(1).values());
      assertEquals(Arrays.asList(3, null), rows.get(2).values());
      assertEquals(Arrays.asList(3, null), rows.get(3).values());
    }
  }

  @Test
  void computedColumnCannotBeWritten() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.items",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.computed("twice", "int")),
        List.of("id"));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.transaction(T0).insert("dbo.items", Map.of("id", 1, "twice", 2)).commit());
    assertEquals(
        "The column 'twice' cannot be modified because it is a computed column", e.getMessage());
  }

  private FakeSqlServer documents() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.docs",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("title", "varchar(20)"),
            ColumnDefinition.of("body", "text"),
            ColumnDefinition.of("notes", "nvarchar(max)"),
            ColumnDefinition.of("blob", "varbinary(max)")),
        List.of("id"));
    db.enableCdc("dbo.docs");
    Map<String, Object> row = new HashMap<>();
    row.put("id", 1);
    row.put("title", "a");
    row.put("body", "long text");
    row.put("notes", "n1");
    row.put("blob", new byte[] {1, 2});
    db.transaction(T0).insert("dbo.docs", row).commit();
    return db;
  }

  private static final List<String> DOC_COLUMNS = List.of("title", "body", "notes", "blob");

  @Test
  void legacyLobIsNullInBeforeImageAndDelete() {
    FakeSqlServer db = documents();
    Lsn l1 =
        db.transaction(minutes(1))
            .update("dbo.docs", List.of(1), Map.of("body", "longer text"))
            .delete("dbo.docs", List.of(1))
            .commit();
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAll(client, "dbo_docs", List.of("body"), l1, l1);
      assertEquals(List.of(3, 4, 1), operations(rows));
      assertEquals(Arrays.asList((Object) null), rows.get(0).values());
      assertEquals(List.of("longer text"), rows.get(1).values());
      assertEquals(Arrays.asList((Object) null), rows.get(2).values());
    }
  }

  @Test
  void maxLobIsNullInBeforeImageUnlessTheUpdateSetsIt() {
    FakeSqlServer db = documents();
    Lsn l1 =
        db.transaction(minutes(1))
            .update("dbo.docs", List.of(1), Map.of("title", "b"))
            .update("dbo.docs", List.of(1), Map.of("notes", "n2"))
            .commit();
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAll(client, "dbo_docs", DOC_COLUMNS, l1, l1);
      assertEquals(List.of(3, 4, 3, 4), operations(rows));
      // Update of title: notes and blob not set, so NULL in the before-image only.
      assertEquals(Arrays.asList("a", null, null, null), rows.get(0).values());
      assertEquals("b", rows.get(1).values().get(0));
      assertEquals("n1", rows.get(1).values().get(2));
      assertArrayEquals(new byte[] {1, 2}, (byte[]) rows.get(1).values().get(3));
      // Update of notes: its before-image keeps the old value.
      assertEquals(Arrays.asList("b", null, "n1", null), rows.get(2).values());
      assertEquals("n2", rows.get(3).values().get(2));
    }
  }

  @Test
  void droppedColumnReadsNullFromTheDropOn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0, 1, "new", "1.00");
    db.dropColumn(ORDERS, "status");
    Lsn l2 =
        db.transaction(minutes(2)).insert(ORDERS, Map.of("order_id", 2, "amount", "2.00")).commit();
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAll(client, CI, List.of("order_id", "status"), l0, l2);
      assertEquals(List.of(1, "new"), rows.get(0).values());
      assertEquals(Arrays.asList(2, null), rows.get(1).values());
      assertEquals("status", client.capturedColumns(CI).get(1).name());
    }
    assertEquals(
        List.of("order_id", "amount", "updated_at"), List.copyOf(db.rows(ORDERS).get(0).keySet()));
  }

  @Test
  void writingADroppedColumnFails() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.dropColumn(ORDERS, "status");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> insertOrder(db, T0, 1, "new", "1.00"));
    assertEquals("Invalid column name 'status' in table 'dbo.orders'", e.getMessage());
  }

  @Test
  void addedColumnIsNotCapturedByTheExistingInstance() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    db.ddl(ORDERS, "ALTER TABLE dbo.orders ADD note nvarchar(50) NULL");
    Lsn l2 = db.transaction(minutes(2)).update(ORDERS, List.of(1), Map.of("note", "hi")).commit();
    try (CdcClient client = db.openClient()) {
      assertEquals(
          FakeScenarios.ORDERS_COLUMN_NAMES,
          client.capturedColumns(CI).stream().map(c -> c.name()).toList());
      assertEquals(Optional.empty(), client.commit(l2));
    }
    assertEquals("hi", db.rows(ORDERS).get(0).get("note"));
  }

  @Test
  void alterColumnChangesTheCapturedTypeAndConvertsValues() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.50");
    db.alterColumn(ORDERS, "amount", SqlServerType.parse("decimal(20,4)"));
    try (CdcClient client = db.openClient()) {
      assertEquals(SqlServerType.parse("decimal(20,4)"), client.capturedColumns(CI).get(2).type());
      assertEquals(
          List.of(new BigDecimal("1.5000")),
          readAll(client, CI, List.of("amount"), Lsn.ZERO, Lsn.MAX).get(0).values());
    }
    assertEquals(new BigDecimal("1.5000"), db.rows(ORDERS).get(0).get("amount"));
  }

  @Test
  void columnTheInstanceDoesNotCaptureReadsNull() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    try (CdcClient client = db.openClient()) {
      assertEquals(
          Arrays.asList(1, null),
          readAll(client, CI, List.of("order_id", "no_such"), Lsn.ZERO, Lsn.MAX).get(0).values());
    }
  }

  @Test
  void columnsMatchIgnoringCase() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(1, "new"),
          readAll(client, CI, List.of("ORDER_ID", "Status"), Lsn.ZERO, Lsn.MAX).get(0).values());
    }
  }

  @Test
  void commandIdIsNullWhenNotRequested() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    try (CdcClient client = db.openClient();
        CloseableIterator<ChangeRow> it =
            client.readChanges(
                new ChangeQuery(CI, Lsn.ZERO, Lsn.MAX, List.of("order_id"), false))) {
      assertNull(it.next().commandId());
    }
  }

  @Test
  void readChangesBoundsAreInclusive() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 5);
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> rows = readAll(client, CI, List.of("order_id"), l.get(1), l.get(3));
      assertEquals(
          List.of(List.of(1), List.of(2), List.of(3)),
          rows.stream().map(ChangeRow::values).toList());
      assertEquals(
          List.of(minutes(1), minutes(2), minutes(3)),
          rows.stream().map(ChangeRow::commitTime).toList());
    }
  }

  @Test
  void emptyIntervalReadsNothing() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 3);
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(), readAll(client, CI, List.of("order_id"), l.get(2), l.get(0)));
      assertEquals(
          List.of(),
          readAll(client, CI, List.of("order_id"), l.get(0).increment(), l.get(1).decrement()));
    }
  }

  @Test
  void valuesUseTheJavaTypesOfChangeRow() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.types",
        List.of(
            ColumnDefinition.of("id", "bigint"),
            ColumnDefinition.of("flag", "bit"),
            ColumnDefinition.of("tiny", "tinyint"),
            ColumnDefinition.of("r", "real"),
            ColumnDefinition.of("f", "float"),
            ColumnDefinition.of("m", "money"),
            ColumnDefinition.of("d", "date"),
            ColumnDefinition.of("dt", "datetime"),
            ColumnDefinition.of("dto", "datetimeoffset(7)"),
            ColumnDefinition.of("t", "time(7)"),
            ColumnDefinition.of("u", "uniqueidentifier"),
            ColumnDefinition.of("c", "char(3)"),
            ColumnDefinition.of("b", "binary(3)")),
        List.of("id"));
    db.enableCdc("dbo.types");
    Map<String, Object> row = new HashMap<>();
    row.put("id", 7L);
    row.put("flag", true);
    row.put("tiny", 200);
    row.put("r", 1.5f);
    row.put("f", 2.25);
    row.put("m", "3.1");
    row.put("d", LocalDate.parse("2026-09-28"));
    row.put("dt", LocalDateTime.parse("2026-09-28T13:50:00.123"));
    row.put("dto", OffsetDateTime.parse("2026-09-28T13:50:01.1234567-03:00"));
    row.put("t", "13:50:00.5");
    row.put("u", "6f9619ff-8b86-d011-b42d-00c04fc964ff");
    row.put("c", "ab");
    row.put("b", new byte[] {1});
    db.transaction(T0).insert("dbo.types", row).commit();
    List<String> columns =
        List.of("id", "flag", "tiny", "r", "f", "m", "d", "dt", "dto", "t", "u", "c");
    try (CdcClient client = db.openClient()) {
      ChangeRow r = readAll(client, "dbo_types", columns, Lsn.ZERO, Lsn.MAX).get(0);
      assertEquals(
          List.of(
              7L,
              true,
              (short) 200,
              1.5f,
              2.25,
              new BigDecimal("3.1000"),
              LocalDate.parse("2026-09-28"),
              LocalDateTime.parse("2026-09-28T13:50:00.123"),
              Instant.parse("2026-09-28T16:50:01.1234567Z"),
              "13:50:00.5",
              "6F9619FF-8B86-D011-B42D-00C04FC964FF",
              "ab "),
          r.values());
      assertArrayEquals(
          new byte[] {1, 0, 0},
          (byte[])
              readAll(client, "dbo_types", List.of("b"), Lsn.ZERO, Lsn.MAX).get(0).values().get(0));
    }
  }

  @Test
  void duplicateKeyFailsAndChangesNothing() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                db.transaction(minutes(1))
                    .insert(ORDERS, order(2, "new", "2.00"))
                    .insert(ORDERS, order(1, "dup", "3.00"))
                    .commit());
    assertEquals(
        "Violation of PRIMARY KEY constraint 'PK_orders'. Cannot insert duplicate key in object"
            + " 'dbo.orders'. The duplicate key value is (1).",
        e.getMessage());
    assertEquals(lsn(1), db.nextLsn());
    assertEquals(1, db.rows(ORDERS).size());
  }

  @Test
  void valueThatDoesNotFitItsTypeIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> insertOrder(db, T0, 1, "a status that is far too long", "1.00"));
    assertEquals(
        "Column 'status' (varchar(20)) cannot take String value 'a status that is far too long':"
            + " String or binary data would be truncated (29 > 20)",
        e.getMessage());
  }

  @Test
  void updateOfAMissingKeyIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.transaction(T0).delete(ORDERS, List.of(9)).commit());
    assertEquals("No row with key (9) in dbo.orders", e.getMessage());
  }

  @Test
  void transactionTouchingTwoTablesNumbersStatementsAcrossIt() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.createTable(
        "dbo.customers",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "nvarchar(50)")),
        List.of("id"));
    db.enableCdc("dbo.customers");
    Lsn l0 =
        db.transaction(T0)
            .insert("dbo.customers", Map.of("id", 1, "name", "Ann"))
            .insert(ORDERS, order(1, "new", "1.00"))
            .commit();
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> orders = readAll(client, CI, List.of("order_id"), l0, l0);
      List<ChangeRow> customers = readAll(client, "dbo_customers", List.of("name"), l0, l0);
      assertEquals(List.of(2), commandIds(orders));
      assertEquals(List.of(1), commandIds(customers));
      assertEquals(List.of(plus(l0, 2)), seqvals(orders));
    }
  }

  @Test
  void loadRowsWritesNoHistory() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      rows.add(order(i, "old", i + ".00"));
    }
    db.loadRows(ORDERS, rows);
    db.enableCdc(ORDERS);
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.empty(), client.maxLsn());
      assertEquals(lsn(0), client.minLsn(CI));
    }
    assertEquals(3, db.rows(ORDERS).size());
    assertEquals(lsn(0), db.nextLsn());
  }

  @Test
  void loadRowsIntoATrackedTableIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> db.loadRows(ORDERS, List.of(order(1, "new", "1.00"))));
    assertEquals(
        "dbo.orders is tracked by capture instance 'dbo_orders': write through transaction(...)"
            + " so CDC captures the rows",
        e.getMessage());
  }
}
