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
 * equal to itself.
 *
 * <p>Memory: a single SMALLINT, INT or BIGINT key with a canonical LSN ({@code 0x} + 20 upper-case
 * hex digits) and a row position below 2^31 is held in primitive arrays (open addressing, linear
 * probing, at most 3/4 full): key 8 bytes, file number 4, position 4, LSN 10 (80 bits), about 35 to
 * 50 bytes per key, no object per entry (5M keys: about 250 MB). Other keys (strings, composite,
 * NULL) take a hash map entry, the key object and a small location object each (about 100 bytes
 * plus the key). {@link SilverMerge}'s cap bounds the keys per table.
 *
 * <p>Not thread-safe: {@link SilverMerge} uses an index under its per-path lock.
 */
public final class KeyIndex {
  /** The value of a NULL key column: one key, equal to itself, ordered first. */
  enum Null {
    NULL
  }

  /** NULL as a key value. */
  static final Object NULL = Null.NULL;

  /**
   * Where one key's live row is.
   *
   * @param file the file number ({@link #file})
   * @param position the row position in the file, from 0
   * @param startLsn the row's LSN
   */
  public record Location(int file, long position, String startLsn) {}

  private final String tableId;
  private long version;
  private final List<String> files = new ArrayList<>();
  private final Map<String, Integer> fileIds = new HashMap<>();

  /** Keys that are not primitive-held, with their locations. */
  private final Map<Object, Location> objects = new HashMap<>();

  private final Map<String, String> lsns = new HashMap<>();

  // The primitive table: slot i is used when fileSlots[i] != 0 (file number + 1).
  private long[] longKeys;
  private int[] fileSlots;
  private int[] positions;
  private long[] lsnHigh;
  private char[] lsnLow;
  private int longCount;

  /**
   * An empty index of one table version.
   *
   * @param tableId the Delta table id
   * @param version the table version it describes
   */
  public KeyIndex(String tableId, long version) {
    this.tableId = tableId;
    this.version = version;
    allocate(16);
  }

  private void allocate(int capacity) {
    longKeys = new long[capacity];
    fileSlots = new int[capacity];
    positions = new int[capacity];
    lsnHigh = new long[capacity];
    lsnLow = new char[capacity];
    longCount = 0;
  }

  /** The Delta table id this index describes. */
  public String tableId() {
    return tableId;
  }

  /** The table version this index describes. */
  public long version() {
    return version;
  }

  /** Stamps the index with the version it now describes. */
  public void setVersion(long version) {
    this.version = version;
  }

  /** How many keys the index holds. */
  public int size() {
    return objects.size() + longCount;
  }

  /** The number a data file path has here, given one on first use. */
  public int fileId(String file) {
    Integer id = fileIds.get(file);
    if (id == null) {
      id = files.size();
      files.add(file);
      fileIds.put(file, id);
    }
    return id;
  }

  /** The data file path of a file number. */
  public String file(int id) {
    return files.get(id);
  }

  /** The location of a key's row, or null when the index has none. */
  public @Nullable Location get(Object key) {
    if (isIntegral(key)) {
      int slot = find(((Number) key).longValue());
      if (slot >= 0) {
        return new Location(
            fileSlots[slot] - 1, positions[slot], decodeLsn(lsnHigh[slot], lsnLow[slot]));
      }
    }
    return objects.get(key);
  }

  /**
   * Records a key's row. When the key already has one (a table with two live rows for a key, which
   * this engine never writes), the row with the newer {@code _start_lsn} is kept.
   */
  public void put(Object key, String file, long position, String startLsn) {
    if (isIntegral(key) && position <= Integer.MAX_VALUE && isCanonicalLsn(startLsn)) {
      long longKey = ((Number) key).longValue();
      long high = hex(startLsn, 2, 18);
      char low = (char) hex(startLsn, 18, 22);
      int slot = find(longKey);
      if (slot >= 0) {
        int c = Long.compareUnsigned(lsnHigh[slot], high);
        if (c > 0 || (c == 0 && lsnLow[slot] > low)) {
          return;
        }
        fileSlots[slot] = fileId(file) + 1;
        positions[slot] = (int) position;
        lsnHigh[slot] = high;
        lsnLow[slot] = low;
        return;
      }
      Location other = objects.get(key);
      if (other != null) {
        if (other.startLsn().compareTo(startLsn) > 0) {
          return;
        }
        objects.remove(key);
      }
      putLong(longKey, fileId(file), (int) position, high, low);
      return;
    }
    Location previous = get(key);
    if (previous != null && previous.startLsn().compareTo(startLsn) > 0) {
      return;
    }
    remove(key);
    objects.put(key, new Location(fileId(file), position, lsns.computeIfAbsent(startLsn, l -> l)));
  }

  /** The value of the hex digits {@code text[from, to)} (canonical: checked before). */
  private static long hex(String text, int from, int to) {
    long value = 0;
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      value = (value << 4) | (c <= '9' ? c - '0' : c - 'A' + 10);
    }
    return value;
  }

  /** Forgets a key. */
  public void remove(Object key) {
    if (isIntegral(key)) {
      int slot = find(((Number) key).longValue());
      if (slot >= 0) {
        removeSlot(slot);
        return;
      }
    }
    objects.remove(key);
  }

  private static boolean isIntegral(Object key) {
    return key instanceof Long || key instanceof Integer || key instanceof Short;
  }

  private static int hash(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }

  private int find(long key) {
    int mask = longKeys.length - 1;
    for (int slot = hash(key) & mask; fileSlots[slot] != 0; slot = (slot + 1) & mask) {
      if (longKeys[slot] == key) {
        return slot;
      }
    }
    return -1;
  }

  private void putLong(long key, int fileId, int position, long high, char low) {
    if ((longCount + 1) * 4L > longKeys.length * 3L) {
      grow();
    }
    int mask = longKeys.length - 1;
    int slot = hash(key) & mask;
    while (fileSlots[slot] != 0) {
      slot = (slot + 1) & mask;
    }
    longKeys[slot] = key;
    fileSlots[slot] = fileId + 1;
    positions[slot] = position;
    lsnHigh[slot] = high;
    lsnLow[slot] = low;
    longCount++;
  }

  private void grow() {
    long[] keys = longKeys;
    int[] fileIds = fileSlots;
    int[] pos = positions;
    long[] high = lsnHigh;
    char[] low = lsnLow;
    allocate(keys.length * 2);
    int mask = longKeys.length - 1;
    for (int i = 0; i < keys.length; i++) {
      if (fileIds[i] != 0) {
        int slot = hash(keys[i]) & mask;
        while (fileSlots[slot] != 0) {
          slot = (slot + 1) & mask;
        }
        longKeys[slot] = keys[i];
        fileSlots[slot] = fileIds[i];
        positions[slot] = pos[i];
        lsnHigh[slot] = high[i];
        lsnLow[slot] = low[i];
        longCount++;
      }
    }
  }

  /** Empties a slot, shifting later entries of its probe run back (no tombstones). */
  private void removeSlot(int slot) {
    int mask = longKeys.length - 1;
    int hole = slot;
    int next = slot;
    while (true) {
      next = (next + 1) & mask;
      if (fileSlots[next] == 0) {
        break;
      }
      int home = hash(longKeys[next]) & mask;
      // The entry at next may fill the hole unless its home lies cyclically in (hole, next].
      boolean stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
      if (stays) {
        continue;
      }
      longKeys[hole] = longKeys[next];
      fileSlots[hole] = fileSlots[next];
      positions[hole] = positions[next];
      lsnHigh[hole] = lsnHigh[next];
      lsnLow[hole] = lsnLow[next];
      hole = next;
    }
    fileSlots[hole] = 0;
    longCount--;
  }

  /** Whether an LSN is {@code 0x} and 20 upper-case hex digits (the canonical text). */
  static boolean isCanonicalLsn(String lsn) {
    if (lsn.length() != 22 || lsn.charAt(0) != '0' || lsn.charAt(1) != 'x') {
      return false;
    }
    for (int i = 2; i < 22; i++) {
      char c = lsn.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) {
        return false;
      }
    }
    return true;
  }

  private static String decodeLsn(long high, char low) {
    String h = Long.toHexString(high).toUpperCase(java.util.Locale.ROOT);
    String l = Integer.toHexString(low).toUpperCase(java.util.Locale.ROOT);
    return "0x" + "0".repeat(16 - h.length()) + h + "0".repeat(4 - l.length()) + l;
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
  public static Object key(Object[] values, int count) {
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
  public static final Comparator<Object> ORDER = KeyIndex::compareKeys;

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
