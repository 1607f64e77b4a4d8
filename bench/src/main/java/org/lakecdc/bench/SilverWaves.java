package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.TypeMapping;
import org.lakecdc.transforms.silver.SilverImage;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * The silver benchmark's rows and waves (docs/performance.md "Silver"), deterministic for a given
 * size, wave size and seed, so that the harness (which writes the waves for delta-spark and knows
 * the expected row count) and the silver JVM (which merges them) make the same ones.
 *
 * <p>The table: silver's schema of {@code dbo.orders} ({@link SilverTable#schema} of its bronze
 * schema), {@code rows} rows with the dense keys {@code o_orderkey} 1..rows in key order, the other
 * values those of the first {@code rows} TPC-H orders, all with the same {@code _start_lsn}.
 *
 * <p>A wave of {@code waveKeys} distinct keys: 80% updates and 9% deletes of keys drawn uniformly
 * at random (without replacement) from the rows the waves so far left, 11% inserts of new keys
 * (rows+1, rows+2, ... in order); every image of wave {@code w} carries {@code _start_lsn} = the
 * table's LSN + {@code w}·16 and {@code _commit_ts} = 2026-01-01T00:00 UTC + {@code w} s, so each
 * wave is newer than everything before it. The table grows by 2% of {@code waveKeys} per wave, so a
 * merge that applies nothing leaves a different row count than the expected one.
 */
final class SilverWaves {
  /** Silver's key columns. */
  static final List<String> KEYS = Orders.KEY;

  /** The table's (initial rows') {@code _start_lsn}, as a number. */
  static final long BASE_LSN = 0x2A_00000001_0001L;

  private static final LocalDateTime BASE_TS =
      LocalDateTime.ofInstant(SourceDatabase.START, ZoneOffset.UTC);

  private static final int TEMPLATES = 1000;

  /** Silver's row schema for {@code dbo.orders}. */
  static final Schema SCHEMA = SilverTable.schema(bronzeSchema());

  private final long rows;
  private final int waveKeys;
  private final long seed;
  private final List<Order> templates = new ArrayList<>();
  private int[] live;
  private int size;
  private int nextKey;
  private int wave;

  /** One wave: its number (from 1), its images and how many of each kind they are. */
  record Wave(int number, List<SilverImage> images, int updates, int deletes, int inserts) {}

  /**
   * The generator of a table of {@code rows} rows and its waves of {@code waveKeys} keys.
   *
   * @param rows the initial rows, 1 to {@link Integer#MAX_VALUE} / 2
   * @param waveKeys keys per wave, at least 1; its updates and deletes (89%) at most {@code rows}
   * @param seed the random keys' seed
   */
  SilverWaves(long rows, int waveKeys, long seed) {
    if (rows < 1 || rows > Integer.MAX_VALUE / 2) {
      throw new IllegalArgumentException("rows must be 1 to " + Integer.MAX_VALUE / 2);
    }
    if (waveKeys < 1 || updates(waveKeys) + deletes(waveKeys) > rows) {
      throw new IllegalArgumentException(
          "waveKeys must be at least 1 and its updates and deletes at most the rows");
    }
    this.rows = rows;
    this.waveKeys = waveKeys;
    this.seed = seed;
    for (Iterator<Order> it = Orders.first(TEMPLATES); it.hasNext(); ) {
      templates.add(it.next());
    }
    live = new int[(int) rows + 1024];
    for (int i = 0; i < rows; i++) {
      live[i] = i + 1;
    }
    size = (int) rows;
    nextKey = (int) rows + 1;
  }

  /** Updates in a wave of {@code keys} keys: 80%. */
  static int updates(int keys) {
    return (int) (keys * 80L / 100);
  }

  /** Deletes in a wave of {@code keys} keys: 9%. */
  static int deletes(int keys) {
    return (int) (keys * 9L / 100);
  }

  /** Inserts of new keys in a wave of {@code keys} keys: the rest, 11%. */
  static int inserts(int keys) {
    return keys - updates(keys) - deletes(keys);
  }

  /** {@code _start_lsn} of wave {@code w} (0: the initial rows): {@code 0x} + 20 hex digits. */
  static String lsn(int w) {
    return Lsn.fromBigInteger(BigInteger.valueOf(BASE_LSN + 16L * w)).toString();
  }

  /** {@code _commit_ts} of wave {@code w} (0: the initial rows). */
  static LocalDateTime commitTs(int w) {
    return BASE_TS.plusSeconds(w);
  }

  /** The rows the table holds after the waves made so far. */
  long liveRows() {
    return size;
  }

  /**
   * The initial rows, in key order, made as they are read (never all in memory): keys 1..rows,
   * values of the first {@code rows} TPC-H orders, {@code _start_lsn} {@link #lsn lsn(0)}.
   */
  Iterator<Row> initialRows() {
    Iterator<Order> orders = Orders.first(rows);
    String lsn = lsn(0);
    LocalDateTime ts = commitTs(0);
    return new Iterator<>() {
      private int key;

      @Override
      public boolean hasNext() {
        return key < rows;
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        key++;
        return row(key, orders.next(), null, lsn, ts);
      }
    };
  }

  /** The next wave's images (in no particular order); the live keys advance past it. */
  Wave next() {
    wave++;
    int u = updates(waveKeys);
    int d = deletes(waveKeys);
    int ins = inserts(waveKeys);
    Random random = new Random(seed * 1_000_003L + wave);
    int m = u + d;
    // A partial Fisher-Yates shuffle: live[0, m) become m distinct keys drawn uniformly.
    for (int j = 0; j < m; j++) {
      int r = j + random.nextInt(size - j);
      int t = live[j];
      live[j] = live[r];
      live[r] = t;
    }
    String lsn = lsn(wave);
    LocalDateTime ts = commitTs(wave);
    String comment = "wave " + wave;
    List<SilverImage> images = new ArrayList<>(waveKeys);
    for (int j = 0; j < u; j++) {
      images.add(new SilverImage(row(live[j], template(live[j]), comment, lsn, ts), false));
    }
    for (int j = u; j < m; j++) {
      images.add(new SilverImage(deleteRow(live[j], lsn, ts), true));
    }
    System.arraycopy(live, m, live, u, size - m);
    size -= d;
    if (size + ins > live.length) {
      live = Arrays.copyOf(live, Math.max(live.length * 2, size + ins));
    }
    for (int j = 0; j < ins; j++) {
      int key = nextKey++;
      live[size++] = key;
      images.add(new SilverImage(row(key, template(key), comment, lsn, ts), false));
    }
    return new Wave(wave, images, u, d, ins);
  }

  private Order template(int key) {
    return templates.get(Math.floorMod(key * 31 + wave, TEMPLATES));
  }

  /**
   * A full row: the key, the order's values (its price raised by {@code wave} cents and its comment
   * prefixed when {@code comment} is given), the LSN and commit time.
   */
  private Row row(int key, Order o, String comment, String lsn, LocalDateTime ts) {
    String text = comment == null ? o.getComment() : comment + ": " + o.getComment();
    return Row.withSchema(SCHEMA)
        .attachValues(
            key,
            (int) o.getCustomerKey(),
            String.valueOf(o.getOrderStatus()),
            BigDecimal.valueOf(o.getTotalPriceInCents() + (comment == null ? 0 : wave), 2),
            LocalDate.ofEpochDay(o.getOrderDate()),
            o.getOrderPriority(),
            o.getClerk(),
            o.getShipPriority(),
            text.length() > 79 ? text.substring(0, 79) : text,
            lsn,
            ts);
  }

  /** A delete image: the key, the LSN and commit time, the rest NULL. */
  private static Row deleteRow(int key, String lsn, LocalDateTime ts) {
    return Row.withSchema(SCHEMA)
        .attachValues(key, null, null, null, null, null, null, null, null, lsn, ts);
  }

  private static Schema bronzeSchema() {
    List<ColumnSpec> specs = new ArrayList<>();
    for (ColumnDefinition c : Orders.COLUMNS) {
      specs.add(new ColumnSpec(c.name(), TypeMapping.outputType(c.name(), c.type())));
    }
    return org.lakecdc.transforms.bronze.BronzeTable.schema(ChangeSchema.of(specs, true));
  }
}
