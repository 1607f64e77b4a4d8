package org.lakecdc.transforms.silver;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Where each key of one silver table version is: key to (data file, row position, {@code
 * _start_lsn}), for {@link SilverMerge}. Only a cache: it describes exactly one table version
 * ({@link #tableId}, {@link #version}) and is used only while the table is at that version.
 *
 * <p>Keys are the encoded forms of {@link #key}: a single-column key is its value itself (a boxed
 * Integer, Long, String, ...), a composite key a list of values; NULL is one value ({@link #NULL}),
 * equal to itself. Files are numbered, LSN texts shared between rows that have the same one (a
 * snapshot's rows all do), so an entry costs one map node, one small object and the key.
 *
 * <p>Not thread-safe: {@link SilverMerge} uses an index under its per-path lock.
 */
final class KeyIndex {
  /** The value of a NULL key column: one key, equal to itself, ordered first. */
  enum Null {
    NULL
  }

  /** NULL as a key value. */
  static final Object NULL = Null.NULL;

  /** Where one key's live row is. */
  record Location(int file, long position, String startLsn) {}

  private final String tableId;
  private long version;
  private final List<String> files = new ArrayList<>();
  private final Map<String, Integer> fileIds = new HashMap<>();
  private final Map<Object, Location> entries;
  private final Map<String, String> lsns = new HashMap<>();

  KeyIndex(String tableId, long version, int expectedKeys) {
    this.tableId = tableId;
    this.version = version;
    this.entries = new HashMap<>(Math.max(16, (int) Math.min(1 << 30, expectedKeys * 4L / 3 + 1)));
  }

  String tableId() {
    return tableId;
  }

  long version() {
    return version;
  }

  /** Stamps the index with the version it now describes. */
  void setVersion(long version) {
    this.version = version;
  }

  int size() {
    return entries.size();
  }

  /** The number a data file path has here, given one on first use. */
  int fileId(String file) {
    Integer id = fileIds.get(file);
    if (id == null) {
      id = files.size();
      files.add(file);
      fileIds.put(file, id);
    }
    return id;
  }

  /** The data file path of a file number. */
  String file(int id) {
    return files.get(id);
  }

  @Nullable Location get(Object key) {
    return entries.get(key);
  }

  /**
   * Records a key's row. When the key already has one (a table with two live rows for a key, which
   * this engine never writes), the row with the newer {@code _start_lsn} is kept.
   */
  void put(Object key, String file, long position, String startLsn) {
    Location location =
        new Location(fileId(file), position, lsns.computeIfAbsent(startLsn, s -> s));
    Location previous = entries.put(key, location);
    if (previous != null && previous.startLsn().compareTo(startLsn) > 0) {
      entries.put(key, previous);
    }
  }

  void remove(Object key) {
    entries.remove(key);
  }

  // ------------------------------------------------------------------------------------------
  // Keys
  // ------------------------------------------------------------------------------------------

  /**
   * The encoded key of some key column values: equal for values SQL compares equal null-safe (NULL
   * equals NULL; decimals equal whatever their scale; binary by content).
   *
   * @param values the key columns' Java values, in key order; null for NULL
   * @param count how many of the values are key values (the first ones)
   * @return a single value for one column, else an unmodifiable list
   */
  static Object key(Object[] values, int count) {
    if (count == 1) {
      return value(values[0]);
    }
    Object[] encoded = new Object[count];
    for (int i = 0; i < count; i++) {
      encoded[i] = value(values[i]);
    }
    return List.of(encoded);
  }

  private static Object value(@Nullable Object value) {
    if (value == null) {
      return NULL;
    }
    if (value instanceof byte[] bytes) {
      return ByteBuffer.wrap(bytes.clone()).asReadOnlyBuffer();
    }
    if (value instanceof BigDecimal decimal) {
      return decimal.signum() == 0 ? BigDecimal.ZERO : decimal.stripTrailingZeros();
    }
    return value;
  }

  /**
   * A total order of encoded keys: NULL first, then the values' natural order (binary unsigned).
   */
  static final Comparator<Object> ORDER = KeyIndex::compareKeys;

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int compareKeys(Object a, Object b) {
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      for (int i = 0; i < Math.min(la.size(), lb.size()); i++) {
        int c = compareKeys(la.get(i), lb.get(i));
        if (c != 0) {
          return c;
        }
      }
      return Integer.compare(la.size(), lb.size());
    }
    if (a == NULL || b == NULL) {
      return a == b ? 0 : (a == NULL ? -1 : 1);
    }
    if (a instanceof ByteBuffer ba && b instanceof ByteBuffer bb) {
      return Arrays.compareUnsigned(bytes(ba), bytes(bb));
    }
    return ((Comparable) a).compareTo(b);
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] bytes = new byte[buffer.remaining()];
    buffer.duplicate().get(bytes);
    return bytes;
  }
}
