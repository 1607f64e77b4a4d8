package org.lakecdc.io.mssqlcdc.fake;

import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Scenario builders shared by the tests of every module (published in the test jar): the The
 * scenarios' setups (docs/scenarios.md) on a {@link FakeSqlServer}.
 *
 * <p>The "dbo_orders" table: {@code order_id int, status varchar(20), amount decimal(18,2),
 * updated_at datetime2(7)}, key {@code order_id}, capture instance {@value #CI}; T0 = {@code
 * 2026-09-28T13:50:00Z}; the fake's k-th LSN (from 0) is {@code 0x0000002A000001000001 + 0x10*k}.
 */
public final class FakeScenarios {
  /** The capture instance of the scenarios. */
  public static final String CI = "dbo_orders";

  /** The source table of the scenarios. */
  public static final String ORDERS = "dbo.orders";

  /** T0 of the scenarios: 2026-09-28 13:50:00 UTC. */
  public static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  /** The columns of {@code dbo.orders}, in order. */
  public static final List<ColumnDefinition> ORDERS_COLUMNS =
      List.of(
          ColumnDefinition.of("order_id", "int"),
          ColumnDefinition.of("status", "varchar(20)"),
          ColumnDefinition.of("amount", "decimal(18,2)"),
          ColumnDefinition.of("updated_at", "datetime2(7)"));

  /** The captured column names of {@code dbo_orders}, in ordinal order. */
  public static final List<String> ORDERS_COLUMN_NAMES =
      List.of("order_id", "status", "amount", "updated_at");

  /** The newer capture instance of the switch scenarios (SW). */
  public static final String V2 = "dbo_orders_v2";

  /** The customers capture instance: a second table whose low watermark keeps mapping rows. */
  public static final String CUSTOMERS_CI = "dbo_customers";

  /** The last LSN of {@link #snapshotScenario}: its idle entry at T0+1h, {@code ...0D1}. */
  public static final Lsn SNAPSHOT_AT = Lsn.parse("0x0000002A0000010000D1");

  private FakeScenarios() {}

  /**
   * The setup of section 3 of docs/scenarios.md: {@code dbo.orders} with an extra column {@code
   * note varchar(20)}; {@value #CI} captures {@code order_id, status, amount, updated_at}; commits
   * c0..c4 insert order i (status "new", amount i.00, note "n{i}") at T0+i minutes ({@code
   * ...001}..{@code ...041}); then {@value #V2} is enabled at T0+5 capturing {@code v2Columns}, so
   * S = {@code ...051}; then commits c5..c9 at T0+5..9 ({@code ...051}..{@code ...091}).
   *
   * @param v2Columns the columns the newer instance captures (must include {@code order_id})
   */
  public static FakeSqlServer switchScenario(Path dir, List<String> v2Columns) {
    FakeSqlServer db = FakeSqlServer.open(dir);
    List<ColumnDefinition> columns = new ArrayList<>(ORDERS_COLUMNS);
    columns.add(ColumnDefinition.of("note", "varchar(20)"));
    db.createTable(ORDERS, columns, List.of("order_id"));
    db.enableCdc(
        ORDERS,
        CaptureOptions.defaults().withCapturedColumns(ORDERS_COLUMN_NAMES).withCreateTime(T0));
    for (int i = 0; i < 5; i++) {
      insertNoted(db, i);
    }
    db.enableCdc(
        ORDERS,
        CaptureOptions.defaults()
            .withName(V2)
            .withCapturedColumns(v2Columns)
            .withCreateTime(minutes(5)));
    for (int i = 5; i < 10; i++) {
      insertNoted(db, i);
    }
    return db;
  }

  private static void insertNoted(FakeSqlServer db, int i) {
    Map<String, Object> row = order(i, "new", i + ".00");
    row.put("note", "n" + i);
    db.transaction(minutes(i)).insert(ORDERS, row).commit();
  }

  /**
   * C076 of docs/scenarios.md, the keyed snapshot scenario: {@code dbo.orders} with CDC as {@value
   * #CI}; orders 0..9 inserted with status "new" at T0+i minutes ({@code ...001}..{@code ...091});
   * order 3 updated new→paid ({@code ...0A1}, T0+10); order 5 deleted ({@code ...0B1}, T0+11); a
   * row with order_id NULL and status "no key" inserted ({@code ...0C1}, T0+12); an idle entry at
   * T0+1h ({@code ...0D1}, {@link #SNAPSHOT_AT}). The table then holds NULL, 0..4, 6..9.
   */
  public static FakeSqlServer snapshotScenario(Path dir) {
    FakeSqlServer db = orders(dir);
    for (int i = 0; i < 10; i++) {
      insertOrder(db, minutes(i), i, "new", null);
    }
    db.transaction(minutes(10)).update(ORDERS, List.of(3), Map.of("status", "paid")).commit();
    db.transaction(minutes(11)).delete(ORDERS, List.of(5)).commit();
    Map<String, Object> noKey = new HashMap<>();
    noKey.put("order_id", null);
    noKey.put("status", "no key");
    db.transaction(minutes(12)).insert(ORDERS, noKey).commit();
    db.idle(T0.plus(Duration.ofHours(1)));
    return db;
  }

  /**
   * Adds {@code dbo.customers (customer_id int, name nvarchar(50))}, key {@code customer_id}, with
   * CDC as {@value #CUSTOMERS_CI}: another instance of the database, whose low watermark keeps
   * {@code cdc.lsn_time_mapping} rows that cleanup of {@value #CI} alone would delete (C066, C276).
   *
   * @return the capture instance name
   */
  public static String customers(FakeSqlServer db) {
    db.createTable(
        "dbo.customers",
        List.of(
            ColumnDefinition.of("customer_id", "int"), ColumnDefinition.of("name", "nvarchar(50)")),
        List.of("customer_id"));
    return db.enableCdc("dbo.customers");
  }

  /** The fake's k-th issued LSN (k from 0): {@code 0x0000002A000001000001 + 0x10 * k}. */
  public static Lsn lsn(int k) {
    return Lsn.fromBigInteger(
        FakeSqlServer.FIRST_LSN
            .toBigInteger()
            .add(FakeSqlServer.LSN_STEP.multiply(BigInteger.valueOf(k))));
  }

  /** T0 plus {@code minutes} minutes. */
  public static Instant minutes(long minutes) {
    return T0.plus(Duration.ofMinutes(minutes));
  }

  /** A server in {@code dir} with {@code dbo.orders} created and CDC enabled as {@value #CI}. */
  public static FakeSqlServer orders(Path dir) {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS);
    return db;
  }

  /** An order row: id, status, amount (decimal text such as {@code "10.50"}), no updated_at. */
  public static Map<String, Object> order(int id, String status, String amount) {
    Map<String, Object> row = new HashMap<>();
    row.put("order_id", id);
    row.put("status", status);
    row.put("amount", amount == null ? null : new BigDecimal(amount));
    return row;
  }

  /** Inserts one order in its own transaction at {@code at}. */
  public static Lsn insertOrder(
      FakeSqlServer db, Instant at, int id, String status, String amount) {
    return db.transaction(at).insert(ORDERS, order(id, status, amount)).commit();
  }

  /**
   * The reference's "n commits": order i (from 0) inserted with status "new" and amount i.00 at T0
   * + i minutes, one transaction each; the k-th is {@link #lsn(int)} when nothing came first.
   *
   * @return the commit LSNs l0, l1, …
   */
  public static List<Lsn> commitOrders(FakeSqlServer db, int count) {
    return commitOrders(db, 0, count);
  }

  /** Like {@link #commitOrders(FakeSqlServer, int)} for orders {@code first..first+count-1}. */
  public static List<Lsn> commitOrders(FakeSqlServer db, int first, int count) {
    List<Lsn> out = new ArrayList<>();
    for (int i = first; i < first + count; i++) {
      out.add(insertOrder(db, minutes(i), i, "new", i + ".00"));
    }
    return out;
  }

  /**
   * Every change row of an instance in {@code [from, to]}, all captured columns, with command id.
   */
  public static List<ChangeRow> readAll(
      CdcClient client, String captureInstance, List<String> columns, Lsn from, Lsn to) {
    List<ChangeRow> out = new ArrayList<>();
    try (CloseableIterator<ChangeRow> it =
        client.readChanges(new ChangeQuery(captureInstance, from, to, columns, true))) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  /** Every change row of {@value #CI} over the whole LSN space. */
  public static List<ChangeRow> readAllOrders(CdcClient client) {
    return readAll(client, CI, ORDERS_COLUMN_NAMES, Lsn.ZERO, Lsn.MAX);
  }

  /**
   * A client of {@link #CI} before capture ever ran: the capture instance has no start LSN and CDC
   * no {@code max_lsn}; any call but {@code maxLsn} and {@code captureInstances} fails the test.
   */
  public static CdcClient neverCaptured() {
    CaptureInstance noStart =
        new CaptureInstance(
            CI,
            "dbo",
            "orders",
            Optional.empty(),
            Optional.of(LocalDateTime.of(2026, 9, 28, 13, 0)),
            List.of("order_id"));
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "maxLsn" -> Optional.empty();
                  case "captureInstances" -> List.of(noStart);
                  default -> throw new AssertionError("unexpected call " + method.getName());
                });
  }
}
