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
  private final List<Integer> liveOrders = new ArrayList<>();
  private final Map<Integer, Map<String, Object>> orderByKey = new HashMap<>();
  private final Map<Integer, Integer> linesPerOrder = new HashMap<>();
  private final List<Map<String, Object>> templateLines;
  private int nextOrderKey;
  private Instant clock;

  /** The random sequence of customers, parts and suppliers (never {@link #random}'s draws). */
  private final Random others;

  /** False in a demo database built before it had customers, parts and suppliers. */
  private final boolean hasOthers;

  private final Map<Integer, BigDecimal> customerBalance = new HashMap<>();
  private final Map<Integer, BigDecimal> partPrice = new HashMap<>();
  private final Map<Integer, BigDecimal> supplierBalance = new HashMap<>();

  /** Live orders per customer key; a customer without live orders is absent. */
  private final Map<Integer, Integer> ordersPerCustomer = new HashMap<>();

  /** Customers without live orders (the ones that may be deleted), in key order, then new ones. */
  private final List<Integer> customersWithoutOrders = new ArrayList<>();

  /** Per live order, its lines' part and supplier keys: {part of line 1, supplier, part, …}. */
  private final Map<Integer, int[]> lineKeys = new HashMap<>();

  private final List<Map<String, Object>> templateCustomers = new ArrayList<>();
  private int nextCustomerKey;

  /**
   * The history of {@code db} from its current rows on: the state (live orders, line counts, the
   * next order key, balances and prices, the clock) is read back from the database, so the second
   * half continues the first in another process.
   */
  DemoHistory(FakeSqlServer db, long part, boolean quietHourFirst) {
    this.db = db;
    this.random = new Random(20261101L * 31 + part);
    this.others = new Random(20261101L * 37 + part);
    this.quietHourFirst = quietHourFirst;
    List<Map<String, Object>> lines = db.rows(LINEITEM);
    this.templateLines = new ArrayList<>(lines.subList(0, Math.min(lines.size(), 1000)));
    for (Map<String, Object> l : lines) {
      int order = ((Number) l.get("l_orderkey")).intValue();
      linesPerOrder.merge(order, 1, Integer::sum);
      int n = ((Number) l.get("l_linenumber")).intValue();
      int[] keys = lineKeys.getOrDefault(order, new int[0]);
      if (keys.length < 2 * n) {
        keys = Arrays.copyOf(keys, 2 * n);
        lineKeys.put(order, keys);
      }
      keys[2 * n - 2] = ((Number) l.get("l_partkey")).intValue();
      keys[2 * n - 1] = ((Number) l.get("l_suppkey")).intValue();
    }
    for (Map<String, Object> o : db.rows(ORDERS)) {
      int key = ((Number) o.get("o_orderkey")).intValue();
      liveOrders.add(key);
      orderByKey.put(key, new LinkedHashMap<>(o));
      nextOrderKey = Math.max(nextOrderKey, key + 1);
      ordersPerCustomer.merge(((Number) o.get("o_custkey")).intValue(), 1, Integer::sum);
    }
    this.hasOthers = db.hasTable(CUSTOMER) && db.hasTable(PART) && db.hasTable(SUPPLIER);
    if (hasOthers) {
      for (Map<String, Object> c : db.rows(CUSTOMER)) {
        int key = ((Number) c.get("c_custkey")).intValue();
        customerBalance.put(key, (BigDecimal) c.get("c_acctbal"));
        if (!ordersPerCustomer.containsKey(key)) {
          customersWithoutOrders.add(key);
        }
        if (templateCustomers.size() < 100) {
          templateCustomers.add(c);
        }
        nextCustomerKey = Math.max(nextCustomerKey, key + 1);
      }
      for (Map<String, Object> p : db.rows(PART)) {
        partPrice.put(
            ((Number) p.get("p_partkey")).intValue(), (BigDecimal) p.get("p_retailprice"));
      }
      for (Map<String, Object> s : db.rows(SUPPLIER)) {
        supplierBalance.put(
            ((Number) s.get("s_suppkey")).intValue(), (BigDecimal) s.get("s_acctbal"));
      }
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
    int[] keys = new int[2 * lines];
    for (int n = 1; n <= lines; n++) {
      Map<String, Object> line =
          new LinkedHashMap<>(templateLines.get(random.nextInt(templateLines.size())));
      line.put("l_orderkey", key);
      line.put("l_linenumber", n);
      line.put("l_linestatus", "O");
      line.put("l_returnflag", "N");
      total = total.add((BigDecimal) line.get("l_extendedprice"));
      newLines.add(line);
      keys[2 * n - 2] = ((Number) line.get("l_partkey")).intValue();
      keys[2 * n - 1] = ((Number) line.get("l_suppkey")).intValue();
    }
    Map<String, Object> order = new LinkedHashMap<>(orderByKey.get(randomLiveOrder()));
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
      addToBalance(tx, CUSTOMER, "c_acctbal", customerBalance, customer, deposit.negate());
      if (others.nextInt(8) == 0) {
        newCustomer = newCustomer();
        tx.insert(CUSTOMER, newCustomer);
      }
    }
    tx.commit();
    liveOrders.add(key);
    orderByKey.put(key, order);
    linesPerOrder.put(key, lines);
    lineKeys.put(key, keys);
    ordersPerCustomer.merge(customer, 1, Integer::sum);
    if (newCustomer != null) {
      int c = (Integer) newCustomer.get("c_custkey");
      customerBalance.put(c, (BigDecimal) newCustomer.get("c_acctbal"));
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
    Map<String, Object> order = orderByKey.get(key);
    String status = "O".equals(order.get("o_orderstatus")) ? "P" : "F";
    FakeSqlServer.Transaction tx =
        db.transaction(clock).update(ORDERS, List.of(key), Map.of("o_orderstatus", status));
    int[] keys = lineKeys.get(key);
    if (hasOthers && !status.equals(order.get("o_orderstatus")) && keys != null) {
      int supplier = keys[2 * others.nextInt(keys.length / 2) + 1];
      BigDecimal payment = BigDecimal.valueOf(1_000 + others.nextInt(99_000), 2);
      addToBalance(tx, SUPPLIER, "s_acctbal", supplierBalance, supplier, payment);
    }
    tx.commit();
    order.put("o_orderstatus", status);
  }

  /**
   * An order's total and one line's discount are corrected; when the total changes, the line's part
   * is repriced by 1% to 5% up or down ({@code p_retailprice}).
   */
  private void priceCorrection() {
    int key = randomLiveOrder();
    Map<String, Object> order = orderByKey.get(key);
    BigDecimal delta = BigDecimal.valueOf(random.nextInt(5000) - 2500, 2);
    BigDecimal before = (BigDecimal) order.get("o_totalprice");
    BigDecimal total = before.add(delta);
    if (total.signum() <= 0) {
      total = BigDecimal.valueOf(100, 2);
    }
    int line = 1 + random.nextInt(linesPerOrder.getOrDefault(key, 1));
    FakeSqlServer.Transaction tx = db.transaction(clock);
    tx.update(ORDERS, List.of(key), Map.of("o_totalprice", total));
    tx.update(
        LINEITEM,
        List.of(key, line),
        Map.of("l_discount", BigDecimal.valueOf(random.nextInt(11), 2)));
    int[] keys = lineKeys.get(key);
    if (hasOthers && total.compareTo(before) != 0 && keys != null && keys.length >= 2 * line) {
      int part = keys[2 * line - 2];
      BigDecimal price = partPrice.get(part);
      if (price != null) {
        int percent = (1 + others.nextInt(5)) * (others.nextBoolean() ? 1 : -1);
        BigDecimal repriced =
            price
                .multiply(BigDecimal.valueOf(100 + percent))
                .movePointLeft(2)
                .setScale(2, RoundingMode.HALF_EVEN);
        tx.update(PART, List.of(part), Map.of("p_retailprice", repriced));
        partPrice.put(part, repriced);
      }
    }
    tx.commit();
    order.put("o_totalprice", total);
  }

  /**
   * An old order is deleted with its lines; one such transaction in three also deletes a customer
   * who has no orders (one TPC-H never gave any, one whose last order went, or a new one).
   */
  private void deleteOldOrder() {
    int index = random.nextInt(Math.max(1, liveOrders.size() / 10));
    int key = liveOrders.remove(index);
    FakeSqlServer.Transaction tx = db.transaction(clock);
    int lines = linesPerOrder.getOrDefault(key, 0);
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
    int customer = ((Number) orderByKey.get(key).get("o_custkey")).intValue();
    orderByKey.remove(key);
    linesPerOrder.remove(key);
    lineKeys.remove(key);
    if (gone >= 0) {
      customerBalance.remove(customersWithoutOrders.remove(gone));
    }
    if (ordersPerCustomer.merge(customer, -1, Integer::sum) == 0) {
      ordersPerCustomer.remove(customer);
      if (customerBalance.containsKey(customer)) {
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
      if (priority.equals(orderByKey.get(key).get("o_orderpriority"))) {
        continue;
      }
      tx.update(ORDERS, List.of(key), Map.of("o_orderpriority", priority));
      orderByKey.get(key).put("o_orderpriority", priority);
      changed++;
    }
    if (changed > 0) {
      tx.commit();
    }
  }

  /**
   * Adds {@code amount} to the balance column of row {@code key} of {@code table} in {@code tx}
   * (and to {@code balances}); nothing when the row is unknown or the amount is zero.
   */
  private static void addToBalance(
      FakeSqlServer.Transaction tx,
      String table,
      String column,
      Map<Integer, BigDecimal> balances,
      int key,
      BigDecimal amount) {
    BigDecimal balance = balances.get(key);
    if (balance == null || amount.signum() == 0) {
      return;
    }
    BigDecimal next = balance.add(amount);
    tx.update(table, List.of(key), Map.of(column, next));
    balances.put(key, next);
  }
}
