package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.TypeMapping;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.history.HistorySpec;
import org.lakecdc.transforms.history.HistoryTable;

/**
 * The history benchmark's rows and waves (docs/performance.md "History"), deterministic for a given
 * size, wave size and seed, so that the harness (which builds the table and writes the waves for
 * delta-spark) and the history JVM (which applies them) make the same ones.
 *
 * <p>The table: the history of {@code dbo.orders} ({@link HistoryTable#schema} of its bronze
 * schema), {@code keys} dense keys {@code o_orderkey} 1..keys with {@value #VERSIONS} versions
 * each: version {@code g} (0 to 4) of every key opens at {@link #lsn lsn(g)} and {@link #commitTs
 * commitTs(g)} and closes at {@code lsn(g + 1)}, the last one is current; values of TPC-H orders (a
 * template per key and version, its price raised by {@code g} cents and its comment naming the
 * version), so consecutive versions differ.
 *
 * <p>A wave {@code w} (from 1): {@code waveKeys} distinct keys drawn uniformly at random (without
 * replacement within the wave) from 1..keys, each updated once by a bronze row (operation 4, one
 * transaction at {@code lsn(4 + w)}): the history closes each key's current version and opens the
 * new one, so the table grows by {@code waveKeys} rows per wave.
 */
final class HistoryWaves {
  /** Versions of every key in the table as built. */
  static final int VERSIONS = 5;

  /** The key columns. */
  static final List<String> KEYS = Orders.KEY;

  /** The capture instance of the bronze rows. */
  static final String INSTANCE = Orders.CAPTURE_INSTANCE;

  private static final long BASE_LSN = 0x2B_00000001_0001L;

  private static final LocalDateTime BASE_TS =
      LocalDateTime.ofInstant(SourceDatabase.START, ZoneOffset.UTC);

  private static final int TEMPLATES = 1000;

  /** Bronze's row schema for {@code dbo.orders} (with {@code _command_id}). */
  static final Schema BRONZE = BronzeTable.schema(changeSchema());

  /** The history's row schema. */
  static final Schema SCHEMA = HistoryTable.schema(BRONZE);

  private final long keys;
  private final int waveKeys;
  private final long seed;
  private final List<Order> templates = new ArrayList<>();
  private int wave;

  /** One wave: its number (from 1), its bronze rows and the versions it opens (same order). */
  record Wave(int number, List<Row> bronze, List<Row> opened) {}

  /**
   * The generator of a history of {@code keys} keys and its waves of {@code waveKeys} keys.
   *
   * @param keys the keys, 1 to {@link Integer#MAX_VALUE} / {@value #VERSIONS}
   * @param waveKeys keys per wave, 1 to {@code keys}
   * @param seed the random keys' seed
   */
  HistoryWaves(long keys, int waveKeys, long seed) {
    if (keys < 1 || keys > Integer.MAX_VALUE / VERSIONS) {
      throw new IllegalArgumentException("keys must be 1 to " + Integer.MAX_VALUE / VERSIONS);
    }
    if (waveKeys < 1 || waveKeys > keys) {
      throw new IllegalArgumentException("waveKeys must be 1 to the keys");
    }
    this.keys = keys;
    this.waveKeys = waveKeys;
    this.seed = seed;
    for (Iterator<Order> it = Orders.first(TEMPLATES); it.hasNext(); ) {
      templates.add(it.next());
    }
  }

  /** {@code _start_lsn} of version {@code g}: {@code 0x} + 20 hex digits. */
  static String lsn(int g) {
    return Lsn.fromBigInteger(BigInteger.valueOf(BASE_LSN + 16L * g)).toString();
  }

  /** {@code _commit_ts} of version {@code g}. */
  static LocalDateTime commitTs(int g) {
    return BASE_TS.plusSeconds(g);
  }

  /** The history's rows after {@code waves} waves: {@code keys × 5 + waves × waveKeys}. */
  long rowsAfter(int waves) {
    return keys * VERSIONS + (long) waves * waveKeys;
  }

  /**
   * What the history JVM applies: the bronze and history tables and the control table, every column
   * tracked, one wave per bronze transaction.
   */
  static HistorySpec spec(String bronze, String history, String control) {
    return new HistorySpec(
        bronze,
        history,
        control,
        null,
        Set.of(INSTANCE),
        KEYS,
        List.of(),
        Granularity.HOUR,
        1_000_000);
  }

  /**
   * The table as built, in version and key order, made as it is read (never all in memory): the
   * closed versions ({@code keys × 4} rows) or the current ones ({@code keys} rows), which the
   * build writes to files apart, as the history's waves write them.
   *
   * @param current whether the current versions, else the closed ones
   */
  Iterator<Row> initialRows(boolean current) {
    int last = current ? VERSIONS : VERSIONS - 1;
    return new Iterator<>() {
      private int key = 1;
      private int version = current ? VERSIONS - 1 : 0;

      @Override
      public boolean hasNext() {
        return version < last;
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        Map<String, Object> values = captured(key, version);
        Row row =
            historyRow(
                values,
                version,
                version + 1 < VERSIONS ? lsn(version + 1) : null,
                version + 1 < VERSIONS ? commitTs(version + 1) : null);
        if (++key > keys) {
          key = 1;
          version++;
        }
        return row;
      }
    };
  }

  /** The next wave; its bronze rows in key-draw order. */
  Wave next() {
    wave++;
    int g = VERSIONS - 1 + wave;
    Random random = new Random(seed * 1_000_003L + wave);
    Set<Integer> drawn = new LinkedHashSet<>();
    while (drawn.size() < waveKeys) {
      drawn.add(1 + random.nextInt((int) keys));
    }
    List<Row> bronze = new ArrayList<>(waveKeys);
    List<Row> opened = new ArrayList<>(waveKeys);
    for (int key : drawn) {
      Map<String, Object> values = captured(key, g);
      Row.Builder b = Row.withSchema(BRONZE);
      List<Object> row = new ArrayList<>();
      for (Schema.Field f : BRONZE.getFields()) {
        String name = f.getName();
        row.add(
            switch (name) {
              case MetadataColumns.CAPTURE_INSTANCE -> INSTANCE;
              case MetadataColumns.START_LSN, MetadataColumns.SEQVAL -> lsn(g);
              case MetadataColumns.OPERATION -> MetadataColumns.OP_UPDATE_AFTER;
              case MetadataColumns.COMMAND_ID -> 1;
              case MetadataColumns.COMMIT_TS -> commitTs(g);
              case MetadataColumns.BATCH_ID -> wave;
              default -> values.get(name);
            });
      }
      bronze.add(b.addValues(row).build());
      opened.add(historyRow(values, g, null, null));
    }
    return new Wave(wave, bronze, opened);
  }

  /** The captured values of a key's version {@code g}. */
  private Map<String, Object> captured(int key, int g) {
    Order o = templates.get(Math.floorMod(key * 31 + g, TEMPLATES));
    String text = "version " + g + ": " + o.getComment();
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("o_orderkey", key);
    values.put("o_custkey", (int) o.getCustomerKey());
    values.put("o_orderstatus", String.valueOf(o.getOrderStatus()));
    values.put("o_totalprice", BigDecimal.valueOf(o.getTotalPriceInCents() + g, 2));
    values.put("o_orderdate", LocalDate.ofEpochDay(o.getOrderDate()));
    values.put("o_orderpriority", o.getOrderPriority());
    values.put("o_clerk", o.getClerk());
    values.put("o_shippriority", o.getShipPriority());
    values.put("o_comment", text.length() > 79 ? text.substring(0, 79) : text);
    return values;
  }

  /** A version as the history holds it: opened by version {@code g}'s change, closed or not. */
  private static Row historyRow(
      Map<String, Object> values, int g, String validToLsn, LocalDateTime validToTs) {
    List<Object> row = new ArrayList<>(SCHEMA.getFieldCount());
    for (Schema.Field f : SCHEMA.getFields()) {
      String name = f.getName();
      row.add(
          switch (name) {
            case HistoryTable.VALID_FROM_LSN, HistoryTable.SEQVAL -> lsn(g);
            case HistoryTable.VALID_FROM_TS -> commitTs(g);
            case HistoryTable.VALID_TO_LSN -> validToLsn;
            case HistoryTable.VALID_TO_TS -> validToTs;
            case HistoryTable.DELETED -> false;
            case HistoryTable.COMMAND_ID -> 1;
            case HistoryTable.OPERATION ->
                g == 0 ? MetadataColumns.OP_INSERT : MetadataColumns.OP_UPDATE_AFTER;
            case HistoryTable.LOST_FROM_LSN -> null;
            default -> values.get(name);
          });
    }
    return Row.withSchema(SCHEMA).addValues(row).build();
  }

  /** The change schema bronze is defined from (with {@code _command_id}). */
  static Schema changeSchema() {
    List<ColumnSpec> specs = new ArrayList<>();
    for (ColumnDefinition c : Orders.COLUMNS) {
      specs.add(new ColumnSpec(c.name(), TypeMapping.outputType(c.name(), c.type())));
    }
    return ChangeSchema.of(specs, true);
  }
}
