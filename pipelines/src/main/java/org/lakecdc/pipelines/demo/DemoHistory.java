package org.lakecdc.pipelines.demo;

import static org.lakecdc.pipelines.demo.DemoDatabase.HISTORY_START;
import static org.lakecdc.pipelines.demo.DemoDatabase.SERVER_ZONE;
import static org.lakecdc.pipelines.demo.DemoTables.CUSTOMER;
import static org.lakecdc.pipelines.demo.DemoTables.LINEITEM;
import static org.lakecdc.pipelines.demo.DemoTables.ORDERS;
import static org.lakecdc.pipelines.demo.DemoTables.PART;
import static org.lakecdc.pipelines.demo.DemoTables.SUPPLIER;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The seeded change history. Orders and line items draw on one random sequence, the other three
 * tables on their own: their statements come after a transaction's order and line-item statements
 * (so those keep their {@code __$seqval}) and only in transactions that change orders or line items
 * anyway (so the commits in {@code cdc.lsn_time_mapping} are the same).
 */
final class DemoHistory {
  private static final String[] PRIORITIES = {
    "1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"
  };

  private static final String[] SEGMENTS = {
    "AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"
  };

  /** TPC-H's 25 nations: {@code c_nationkey} 0 to 24. */
  private static final int NATIONS = 25;

  private final FakeSqlServer db;
  private final Random random;
  private final boolean quietHourFirst;

  /**
   * The keys of the live orders, in key order, then the new ones: what a transaction draws an order
   * from (one key per order; the orders' and their lines' rows are read from the database when a
   * transaction needs them).
   */
  private final List<Integer> liveOrders = new ArrayList<>();

  private final List<Map<String, Object>> templateLines = new ArrayList<>();
  private int nextOrderKey;
  private Instant clock;

  /** The random sequence of customers, parts and suppliers (never {@link #random}'s draws). */
  private final Random others;

  /** False in a demo database built before it had customers, parts and suppliers. */
  private final boolean hasOthers;

  /** Live orders per customer key; a customer without live orders is absent. */
  private final Map<Integer, Integer> ordersPerCustomer = new HashMap<>();

  /** Customers without live orders (the ones that may be deleted), in key order, then new ones. */
  private final List<Integer> customersWithoutOrders = new ArrayList<>();

  private final List<Map<String, Object>> templateCustomers = new ArrayList<>();
  private int nextCustomerKey;

  /**
   * The history of {@code db} from its current rows on: the state (live orders, the next order and
   * customer key, the customers without orders, the clock) is read back from the database, a row at
   * a time, so the second half continues the first in another process; balances, prices and an
   * order's lines are read from the database when a transaction needs them.
   */
  DemoHistory(FakeSqlServer db, long part, boolean quietHourFirst) {
    this.db = db;
    this.random = new Random(20261101L * 31 + part);
    this.others = new Random(20261101L * 37 + part);
    this.quietHourFirst = quietHourFirst;
    db.scanRows(
        LINEITEM,
        null,
        l -> {
          templateLines.add(l);
          return templateLines.size() < 1000;
        });
    db.scanRows(
        ORDERS,
        null,
        o -> {
          int key = ((Number) o.get("o_orderkey")).intValue();
          liveOrders.add(key);
          nextOrderKey = Math.max(nextOrderKey, key + 1);
          ordersPerCustomer.merge(((Number) o.get("o_custkey")).intValue(), 1, Integer::sum);
          return true;
        });
    this.hasOthers = db.hasTable(CUSTOMER) && db.hasTable(PART) && db.hasTable(SUPPLIER);
    if (hasOthers) {
      db.scanRows(
          CUSTOMER,
          null,
          c -> {
            int key = ((Number) c.get("c_custkey")).intValue();
            if (!ordersPerCustomer.containsKey(key)) {
              customersWithoutOrders.add(key);
            }
            if (templateCustomers.size() < 100) {
              templateCustomers.add(c);
            }
            nextCustomerKey = Math.max(nextCustomerKey, key + 1);
            return true;
          });
    }
    try (var client = db.openClient()) {
      this.clock =
          client
              .maxLsn()
              .flatMap(client::lastCommitAtOrBefore)
              .map(c -> c.commitTime())
              .orElse(HISTORY_START);
    }
  }

  /** Runs {@code count} transactions, after a quiet hour of idle entries when asked. */
  int run(int count) {
    if (quietHourFirst) {
      for (int k = 0; k < 12; k++) {
        clock = clock.plus(Duration.ofMinutes(5));
        db.idle(clock);
      }
    }
    for (int i = 0; i < count; i++) {
      clock = clock.plus(Duration.ofSeconds(10 + random.nextInt(20)));
      int kind = random.nextInt(100);
      if (kind < 35) {
        newOrder();
      } else if (kind < 65) {
        statusChange();
      } else if (kind < 85) {
        priceCorrection();
      } else if (kind < 95) {
        deleteOldOrder();
      } else {
        priorityBatch();
      }
    }
    return count;
  }

  private int randomLiveOrder() {
    return liveOrders.get(random.nextInt(liveOrders.size()));
  }

  /**
   * A new order with its lines; its customer pays a deposit of 1% of the total from the account
   * balance, and one transaction in eight also signs up a new customer.
   */
  private void newOrder() {
    int key = nextOrderKey++;
    int lines = 1 + random.nextInt(7);
    FakeSqlServer.Transaction tx = db.transaction(clock);
    BigDecimal total = BigDecimal.ZERO.setScale(2);
    List<Map<String, Object>> newLines = new ArrayList<>();
    for (int n = 1; n <= lines; n++) {
      Map<String, Object> line =
          new LinkedHashMap<>(templateLines.get(random.nextInt(templateLines.size())));
      line.put("l_orderkey", key);
      line.put("l_linenumber", n);
      line.put("l_linestatus", "O");
      line.put("l_returnflag", "N");
      total = total.add((BigDecimal) line.get("l_extendedprice"));
      newLines.add(line);
    }
    Map<String, Object> order = new LinkedHashMap<>(order(randomLiveOrder()));
    order.put("o_orderkey", key);
    order.put("o_orderstatus", "O");
    order.put("o_totalprice", total);
    order.put("o_orderdate", LocalDate.ofInstant(clock, SERVER_ZONE));
    tx.insert(ORDERS, order);
    for (Map<String, Object> line : newLines) {
      tx.insert(LINEITEM, line);
    }
    int customer = ((Number) order.get("o_custkey")).intValue();
    Map<String, Object> newCustomer = null;
    if (hasOthers) {
      BigDecimal deposit = total.movePointLeft(2).setScale(2, RoundingMode.HALF_EVEN);
      addToBalance(tx, CUSTOMER, "c_acctbal", customer, deposit.negate());
      if (others.nextInt(8) == 0) {
        newCustomer = newCustomer();
        tx.insert(CUSTOMER, newCustomer);
      }
    }
    tx.commit();
    liveOrders.add(key);
    ordersPerCustomer.merge(customer, 1, Integer::sum);
    if (newCustomer != null) {
      int c = (Integer) newCustomer.get("c_custkey");
      customersWithoutOrders.add(c);
      nextCustomerKey++;
    }
  }

  /** A new customer in TPC-H's form: the next key, address and comment of an existing one. */
  private Map<String, Object> newCustomer() {
    int key = nextCustomerKey;
    Map<String, Object> template = templateCustomers.get(others.nextInt(templateCustomers.size()));
    int nation = others.nextInt(NATIONS);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("c_custkey", key);
    row.put("c_name", String.format(Locale.ROOT, "Customer#%09d", key));
    row.put("c_address", template.get("c_address"));
    row.put("c_nationkey", nation);
    row.put(
        "c_phone",
        String.format(
            Locale.ROOT,
            "%02d-%03d-%03d-%04d",
            10 + nation,
            100 + others.nextInt(900),
            100 + others.nextInt(900),
            1000 + others.nextInt(9000)));
    // TPC-H's balances: -999.99 to 9,999.99.
    row.put("c_acctbal", BigDecimal.valueOf(others.nextInt(1_099_999) - 99_999, 2));
    row.put("c_mktsegment", SEGMENTS[others.nextInt(SEGMENTS.length)]);
    row.put("c_comment", template.get("c_comment"));
    return row;
  }

  /**
   * An order's status moves on (O to P to F); when it does, the supplier of one of its lines is
   * paid 10.00 to 999.99 ({@code s_acctbal}). A status that stays F changes nothing (no commit).
   */
  private void statusChange() {
    int key = randomLiveOrder();
    Map<String, Object> order = order(key);
    String status = "O".equals(order.get("o_orderstatus")) ? "P" : "F";
    FakeSqlServer.Transaction tx =
        db.transaction(clock).update(ORDERS, List.of(key), Map.of("o_orderstatus", status));
    int[] keys = lineKeys(key);
    if (hasOthers && !status.equals(order.get("o_orderstatus")) && keys != null) {
      int supplier = keys[2 * others.nextInt(keys.length / 2) + 1];
      BigDecimal payment = BigDecimal.valueOf(1_000 + others.nextInt(99_000), 2);
      addToBalance(tx, SUPPLIER, "s_acctbal", supplier, payment);
    }
    tx.commit();
  }

  /**
   * An order's total and one line's discount are corrected; when the total changes, the line's part
   * is repriced by 1% to 5% up or down ({@code p_retailprice}).
   */
  private void priceCorrection() {
    int key = randomLiveOrder();
    Map<String, Object> order = order(key);
    BigDecimal delta = BigDecimal.valueOf(random.nextInt(5000) - 2500, 2);
    BigDecimal before = (BigDecimal) order.get("o_totalprice");
    BigDecimal total = before.add(delta);
    if (total.signum() <= 0) {
      total = BigDecimal.valueOf(100, 2);
    }
    int[] keys = lineKeys(key);
    int line = 1 + random.nextInt(keys == null ? 1 : keys.length / 2);
    FakeSqlServer.Transaction tx = db.transaction(clock);
    tx.update(ORDERS, List.of(key), Map.of("o_totalprice", total));
    tx.update(
        LINEITEM,
        List.of(key, line),
        Map.of("l_discount", BigDecimal.valueOf(random.nextInt(11), 2)));
    if (hasOthers && total.compareTo(before) != 0 && keys != null && keys.length >= 2 * line) {
      int part = keys[2 * line - 2];
      Map<String, Object> partRow = db.row(PART, List.of(part));
      BigDecimal price = partRow == null ? null : (BigDecimal) partRow.get("p_retailprice");
      if (price != null) {
        int percent = (1 + others.nextInt(5)) * (others.nextBoolean() ? 1 : -1);
        BigDecimal repriced =
            price
                .multiply(BigDecimal.valueOf(100 + percent))
                .movePointLeft(2)
                .setScale(2, RoundingMode.HALF_EVEN);
        tx.update(PART, List.of(part), Map.of("p_retailprice", repriced));
      }
    }
    tx.commit();
  }

  /**
   * An old order is deleted with its lines; one such transaction in three also deletes a customer
   * who has no orders (one TPC-H never gave any, one whose last order went, or a new one).
   */
  private void deleteOldOrder() {
    int index = random.nextInt(Math.max(1, liveOrders.size() / 10));
    int key = liveOrders.remove(index);
    int customer = ((Number) order(key).get("o_custkey")).intValue();
    int[] keys = lineKeys(key);
    FakeSqlServer.Transaction tx = db.transaction(clock);
    int lines = keys == null ? 0 : keys.length / 2;
    for (int n = 1; n <= lines; n++) {
      tx.delete(LINEITEM, List.of(key, n));
    }
    tx.delete(ORDERS, List.of(key));
    int gone = -1;
    if (hasOthers && others.nextInt(3) == 0 && !customersWithoutOrders.isEmpty()) {
      gone = others.nextInt(customersWithoutOrders.size());
      tx.delete(CUSTOMER, List.of(customersWithoutOrders.get(gone)));
    }
    tx.commit();
    if (gone >= 0) {
      customersWithoutOrders.remove(gone);
    }
    if (ordersPerCustomer.merge(customer, -1, Integer::sum) == 0) {
      ordersPerCustomer.remove(customer);
      if (hasOthers && db.row(CUSTOMER, List.of(customer)) != null) {
        customersWithoutOrders.add(customer);
      }
    }
  }

  /** Priority changes of up to five orders; nothing is committed when every pick keeps its own. */
  private void priorityBatch() {
    FakeSqlServer.Transaction tx = db.transaction(clock);
    List<Integer> touched = new ArrayList<>();
    int changed = 0;
    for (int n = 0; n < 5; n++) {
      int key = randomLiveOrder();
      if (touched.contains(key)) {
        continue;
      }
      touched.add(key);
      String priority = PRIORITIES[random.nextInt(PRIORITIES.length)];
      if (priority.equals(order(key).get("o_orderpriority"))) {
        continue;
      }
      tx.update(ORDERS, List.of(key), Map.of("o_orderpriority", priority));
      changed++;
    }
    if (changed > 0) {
      tx.commit();
    }
  }

  /** The order's row now. */
  private Map<String, Object> order(int key) {
    return db.row(ORDERS, List.of(key));
  }

  /**
   * The part and supplier keys of the order's lines by line number, {part of line 1, supplier,
   * part, …} (up to the highest line number); null when the order has no lines.
   */
  private int[] lineKeys(int order) {
    int[][] keys = {new int[0]};
    db.scanRows(
        LINEITEM,
        List.of(order, 0),
        l -> {
          if (((Number) l.get("l_orderkey")).intValue() != order) {
            return false;
          }
          int n = ((Number) l.get("l_linenumber")).intValue();
          if (keys[0].length < 2 * n) {
            keys[0] = Arrays.copyOf(keys[0], 2 * n);
          }
          keys[0][2 * n - 2] = ((Number) l.get("l_partkey")).intValue();
          keys[0][2 * n - 1] = ((Number) l.get("l_suppkey")).intValue();
          return true;
        });
    return keys[0].length == 0 ? null : keys[0];
  }

  /**
   * Adds {@code amount} to the balance column of row {@code key} of {@code table} in {@code tx};
   * nothing when the row is unknown, its balance NULL or the amount zero.
   */
  private void addToBalance(
      FakeSqlServer.Transaction tx, String table, String column, int key, BigDecimal amount) {
    Map<String, Object> row = db.row(table, List.of(key));
    BigDecimal balance = row == null ? null : (BigDecimal) row.get(column);
    if (balance == null || amount.signum() == 0) {
      return;
    }
    tx.update(table, List.of(key), Map.of(column, balance.add(amount)));
  }
}
