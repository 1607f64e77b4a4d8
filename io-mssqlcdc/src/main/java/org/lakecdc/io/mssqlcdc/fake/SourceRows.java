package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiPredicate;

/**
 * One source table's rows as the writer ({@link FakeSqlServer}) sees them: the table's file as last
 * written (the base) and, in memory, only the rows changed since (the overlay: a row, or {@link
 * #DELETED} for a row deleted). The base stays on disk and is read by key, from the file's sparse
 * key index ({@link SourceTableIndex}, the one the reader's range reads use), so a table of any
 * size is changed with the memory of its changes: a base of at most {@link #IN_MEMORY_BYTES} bytes
 * is held in memory whole instead (a small table is then read and rewritten without parsing its
 * file again). Writing the table ({@link #writeTo}) merges the base and the overlay in key order
 * into the new file, a row at a time; the file written becomes the new base ({@link #written}).
 *
 * <p>The base is read in the columns it was written with; a DDL statement since ({@link
 * #columnsChanged}) is applied to each base row as it is read, as it was applied to the overlay's
 * rows when it ran: a dropped column is gone, an added one NULL, an altered one converted from its
 * stored value as {@code ALTER COLUMN} converts it.
 */
final class SourceRows {
  /** A base file of at most this many bytes is held in memory whole: 4 MiB. */
  static final long IN_MEMORY_BYTES = 4L << 20;

  /** The overlay's mark of a deleted row. */
  static final Map<String, Object> DELETED = Collections.emptyMap();

  private final Path file;
  private final Catalog.Table table;
  private final TreeMap<KeyTuple, Map<String, Object>> overlay = new TreeMap<>();

  /** The base's columns (first), then the table's columns after each DDL statement since. */
  private final List<List<Catalog.Column>> layouts = new ArrayList<>();

  /**
   * The whole base in the table's current columns when it is small (or the table new), else null:
   * the base is then read from {@link #file}.
   */
  private TreeMap<KeyTuple, Map<String, Object>> held;

  private SourceRows(Path file, Catalog.Table table, TreeMap<KeyTuple, Map<String, Object>> held) {
    this.file = file;
    this.table = table;
    this.held = held;
    layouts.add(List.copyOf(table.columns));
  }

  /** A new table: no rows, no file yet. */
  static SourceRows created(Path file, Catalog.Table table) {
    return new SourceRows(file, table, new TreeMap<>());
  }

  /** A table whose rows are in {@code file} (absent: none), read when first needed. */
  static SourceRows onDisk(Path file, Catalog.Table table) {
    SourceRows rows = new SourceRows(file, table, null);
    FileStamp stamp = FileStamp.of(file);
    if (stamp.absent() || stamp.size() == 0) {
      rows.held = new TreeMap<>();
    } else if (stamp.size() <= IN_MEMORY_BYTES) {
      TreeMap<KeyTuple, Map<String, Object>> all = new TreeMap<>();
      rows.scanBase(
          null,
          (key, row) -> {
            all.put(key, row);
            return true;
          });
      rows.held = all;
    }
    return rows;
  }

  /** The rows held in memory: the overlay's and a small base's (for tests: the bound). */
  int rowsHeld() {
    return overlay.size() + (held == null ? 0 : held.size());
  }

  /** True when the table has no rows. */
  boolean isEmpty() {
    boolean[] any = {false};
    scan(
        null,
        (k, r) -> {
          any[0] = true;
          return false;
        });
    return !any[0];
  }

  /** The row with {@code key}, or null. */
  Map<String, Object> get(KeyTuple key) {
    Map<String, Object> changed = overlay.get(key);
    if (changed != null) {
      return changed == DELETED ? null : changed;
    }
    if (held != null) {
      return held.get(key);
    }
    Object[] found = {null};
    scanBase(
        key,
        (k, row) -> {
          if (k.compareTo(key) == 0) {
            found[0] = row;
          }
          return false;
        });
    @SuppressWarnings("unchecked")
    Map<String, Object> row = (Map<String, Object>) found[0];
    return row;
  }

  /** Sets the row of {@code key} (a full row in the table's current columns). */
  void put(KeyTuple key, Map<String, Object> row) {
    overlay.put(key, row);
  }

  /** Deletes the row of {@code key}. */
  void remove(KeyTuple key) {
    overlay.put(key, DELETED);
  }

  /**
   * Visits the rows in key order from {@code lower} (inclusive; null: from the first) while {@code
   * visitor} returns true. The rows are the writer's (stored values), not to be changed.
   */
  void scan(KeyTuple lower, BiPredicate<KeyTuple, Map<String, Object>> visitor) {
    Iterator<Map.Entry<KeyTuple, Map<String, Object>>> changes =
        (lower == null ? overlay : overlay.tailMap(lower, true)).entrySet().iterator();
    List<Map.Entry<KeyTuple, Map<String, Object>>> next = new ArrayList<>(1);
    next.add(changes.hasNext() ? changes.next() : null);
    boolean[] stopped = {false};
    // A base row (null: past the last): the changes at or before its key first; a change at its
    // key replaces it.
    BiPredicate<KeyTuple, Map<String, Object>> merged =
        (key, row) -> {
          while (next.get(0) != null && (key == null || next.get(0).getKey().compareTo(key) <= 0)) {
            Map.Entry<KeyTuple, Map<String, Object>> c = next.get(0);
            next.set(0, changes.hasNext() ? changes.next() : null);
            if (c.getValue() != DELETED && !visitor.test(c.getKey(), c.getValue())) {
              stopped[0] = true;
              return false;
            }
            if (key != null && c.getKey().compareTo(key) == 0) {
              return true;
            }
          }
          if (key != null && !visitor.test(key, row)) {
            stopped[0] = true;
            return false;
          }
          return true;
        };
    if (held != null) {
      for (Map.Entry<KeyTuple, Map<String, Object>> e :
          (lower == null ? held : held.tailMap(lower, true)).entrySet()) {
        if (!merged.test(e.getKey(), e.getValue())) {
          break;
        }
      }
    } else {
      scanBase(lower, merged);
    }
    if (!stopped[0]) {
      merged.test(null, null);
    }
  }

  /**
   * Visits the base file's rows (in the table's current columns) from {@code lower} while {@code
   * visitor} returns true, starting at the index entry before {@code lower}.
   */
  private void scanBase(KeyTuple lower, BiPredicate<KeyTuple, Map<String, Object>> visitor) {
    List<Catalog.Column> keys = table.keyColumns();
    FakeFormat.JsonLines lines;
    if (lower == null) {
      lines = FakeFormat.JsonLines.open(file);
    } else {
      SourceTableIndex.Seek seek =
          SourceTableIndex.open(file, keys, (n, where) -> keyOf(keys, n), lower);
      lines = FakeFormat.JsonLines.open(file, seek.channel(), seek.offset(), seek.linesBefore());
    }
    try (FakeFormat.JsonLines open = lines) {
      for (JsonNode n = open.next(); n != null; n = open.next()) {
        KeyTuple key = keyOf(keys, n);
        if (lower != null && key.compareTo(lower) < 0) {
          continue;
        }
        if (!visitor.test(key, baseRow(n))) {
          return;
        }
      }
    }
  }

  private static KeyTuple keyOf(List<Catalog.Column> keys, JsonNode n) {
    List<Object> values = new ArrayList<>(keys.size());
    for (Catalog.Column k : keys) {
      values.add(SqlValues.fromJson(k.name(), k.type(), FakeSqlServer.field(n, k.name())));
    }
    return KeyTuple.of(keys, values);
  }

  /** A base line as a row of the table's current columns. */
  private Map<String, Object> baseRow(JsonNode n) {
    Map<String, Object> row = new LinkedHashMap<>();
    for (Catalog.Column c : layouts.get(0)) {
      row.put(
          c.name(),
          c.computed()
              ? null
              : SqlValues.fromJson(c.name(), c.type(), FakeSqlServer.field(n, c.name())));
    }
    for (int i = 1; i < layouts.size(); i++) {
      row = convert(row, layouts.get(i - 1), layouts.get(i));
    }
    return row;
  }

  /**
   * A row of columns {@code from} in columns {@code to}, matched by {@code column_id}: a column
   * gone is dropped, a new one NULL, one of another type converted from its stored value as {@code
   * ALTER COLUMN} converts it.
   */
  static Map<String, Object> convert(
      Map<String, Object> row, List<Catalog.Column> from, List<Catalog.Column> to) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Catalog.Column c : to) {
      Catalog.Column before = null;
      for (Catalog.Column b : from) {
        if (b.columnId() == c.columnId()) {
          before = b;
        }
      }
      Object v = before == null ? null : row.get(before.name());
      if (before != null && !before.type().equals(c.type())) {
        v = SqlValues.normalize(c.name(), c.type(), v == null ? null : SqlValues.readerValue(v));
      }
      out.put(c.name(), v);
    }
    return out;
  }

  /**
   * The table's columns changed (a DDL statement): the overlay's rows (and a held base) take the
   * new columns now, the base on disk as it is read.
   */
  void columnsChanged() {
    List<Catalog.Column> from = layouts.get(layouts.size() - 1);
    List<Catalog.Column> to = List.copyOf(table.columns);
    overlay.replaceAll((k, row) -> row == DELETED ? row : convert(row, from, to));
    if (held != null) {
      held.replaceAll((k, row) -> convert(row, from, to));
    }
    layouts.add(to);
  }

  /**
   * Writes every row, in key order, as the table's JSON lines to {@code out}; returns what {@link
   * #written} takes once the file is in place.
   */
  Written writeTo(Writer out) throws IOException {
    TreeMap<KeyTuple, Map<String, Object>> small = new TreeMap<>();
    SourceTableIndex.Sidecar sidecar = new SourceTableIndex.Sidecar(table.keyColumns());
    long[] bytes = {0};
    IOException[] failed = {null};
    scan(
        null,
        (key, row) -> {
          ObjectNode n = node(row);
          String line = FakeFormat.line(n);
          sidecar.line(n, line);
          try {
            out.write(line);
            out.write('\n');
          } catch (IOException e) {
            failed[0] = e;
            return false;
          }
          bytes[0] += line.length() + 1;
          if (bytes[0] <= IN_MEMORY_BYTES) {
            small.put(key, row);
          }
          return true;
        });
    if (failed[0] != null) {
      throw failed[0];
    }
    return new Written(bytes[0] <= IN_MEMORY_BYTES ? small : null, sidecar);
  }

  /**
   * Writes {@code rows}, full rows in the table's current columns in strictly increasing key order
   * ({@code keyOf} gives a row's key), as the table's JSON lines to {@code out}.
   *
   * @throws IllegalArgumentException for a row whose key is not after the one before it
   */
  Written writeTo(
      Writer out,
      Iterator<Map<String, Object>> rows,
      java.util.function.Function<Map<String, Object>, KeyTuple> keyOf,
      java.util.function.Function<KeyTuple, RuntimeException> duplicate)
      throws IOException {
    TreeMap<KeyTuple, Map<String, Object>> small = new TreeMap<>();
    SourceTableIndex.Sidecar sidecar = new SourceTableIndex.Sidecar(table.keyColumns());
    long bytes = 0;
    KeyTuple previous = null;
    while (rows.hasNext()) {
      Map<String, Object> row = rows.next();
      KeyTuple key = keyOf.apply(row);
      if (previous != null && key.compareTo(previous) <= 0) {
        if (key.compareTo(previous) == 0) {
          throw duplicate.apply(key);
        }
        throw new IllegalArgumentException(
            "Rows loaded in key order must come in increasing key order: "
                + key
                + " after "
                + previous
                + " in "
                + table.qualified());
      }
      previous = key;
      ObjectNode n = node(row);
      String line = FakeFormat.line(n);
      sidecar.line(n, line);
      out.write(line);
      out.write('\n');
      bytes += line.length() + 1;
      if (bytes <= IN_MEMORY_BYTES) {
        small.put(key, row);
      }
    }
    return new Written(bytes <= IN_MEMORY_BYTES ? small : null, sidecar);
  }

  /** A row's object in the table's file: every column of the table, in column order. */
  private ObjectNode node(Map<String, Object> row) {
    ObjectNode n = FakeFormat.object();
    for (Catalog.Column c : table.columns) {
      n.set(c.name(), SqlValues.toJson(c.type(), row.get(c.name())));
    }
    return n;
  }

  /**
   * What a write of the table left: the rows written when they are few enough to hold, and the key
   * index of the lines written.
   */
  record Written(TreeMap<KeyTuple, Map<String, Object>> small, SourceTableIndex.Sidecar sidecar) {}

  /**
   * The file of {@code written} is in place: it is the new base, the overlay is empty; its key
   * index is written beside it ({@link SourceTableIndex.Sidecar}).
   */
  void written(Written written) {
    written.sidecar().writeFor(file);
    overlay.clear();
    layouts.clear();
    layouts.add(List.copyOf(table.columns));
    held = written.small();
  }
}
