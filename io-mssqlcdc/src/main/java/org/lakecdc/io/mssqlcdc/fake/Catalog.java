package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The fake's metadata in memory: the server ({@code server.json}), source tables ({@code
 * sys.tables}, {@code sys.columns}) and capture instances ({@code cdc.change_tables}, {@code
 * cdc.captured_columns}, {@code cdc.index_columns}), plus the row types of {@code
 * cdc.lsn_time_mapping} and {@code cdc.ddl_history}. Loaded by both the writer and the reader;
 * mutated only by the writer.
 */
final class Catalog {
  /** {@code server.json}. */
  static final class Server {
    int formatVersion = FakeFormat.FORMAT_VERSION;
    ZoneId timeZone = ZoneId.of("UTC");
    Lsn nextLsn = FakeSqlServer.FIRST_LSN;

    /** The simulated clock: the UTC time of the latest event written, or null before any. */
    Instant clock;
  }

  /**
   * A column of a source table ({@code sys.columns}); {@code collation} is that of a character
   * column ({@code collation_name}) and null for other types.
   */
  record Column(
      String name,
      int columnId,
      SqlServerType type,
      boolean computed,
      int keyOrdinal,
      Collation collation) {}

  /** A source table ({@code sys.tables}) and its live columns, by {@code column_id}. */
  static final class Table {
    final String schema;
    final String name;
    int maxColumnIdUsed;
    final List<Column> columns = new ArrayList<>();

    Table(String schema, String name) {
      this.schema = schema;
      this.name = name;
    }

    String qualified() {
      return schema + "." + name;
    }

    /** The key columns in key order. */
    List<Column> keyColumns() {
      List<Column> keys = new ArrayList<>();
      for (Column c : columns) {
        if (c.keyOrdinal() > 0) {
          keys.add(c);
        }
      }
      keys.sort(Comparator.comparingInt(Column::keyOrdinal));
      return keys;
    }

    /** The live column with this name, ignoring case, or null. */
    Column column(String columnName) {
      for (Column c : columns) {
        if (c.name().equalsIgnoreCase(columnName)) {
          return c;
        }
      }
      return null;
    }

    /** The live column with this {@code column_id}, or null when it was dropped. */
    Column columnById(int columnId) {
      for (Column c : columns) {
        if (c.columnId() == columnId) {
          return c;
        }
      }
      return null;
    }
  }

  /** A column a capture instance captures ({@code cdc.captured_columns}). */
  record Captured(String name, int columnId, int ordinal, SqlServerType type, boolean computed) {}

  /** A column of the index a capture instance uses ({@code cdc.index_columns}). */
  record IndexColumn(String name, int indexOrdinal, int columnId) {}

  /** A capture instance ({@code cdc.change_tables}). */
  static final class Instance {
    final String name;
    final String schema;
    final String table;
    Lsn startLsn;
    LocalDateTime createDate;
    boolean supportsNetChanges;
    String indexName;
    final List<Captured> columns = new ArrayList<>();
    final List<IndexColumn> indexColumns = new ArrayList<>();

    Instance(String name, String schema, String table) {
      this.name = name;
      this.schema = schema;
      this.table = table;
    }

    boolean tracks(Table t) {
      return schema.equalsIgnoreCase(t.schema) && table.equalsIgnoreCase(t.name);
    }

    /** The captured column with this name, ignoring case, or null. */
    Captured column(String columnName) {
      for (Captured c : columns) {
        if (c.name().equalsIgnoreCase(columnName)) {
          return c;
        }
      }
      return null;
    }
  }

  /** A row of {@code cdc.lsn_time_mapping}; times are server-local. */
  record MappingRow(
      Lsn startLsn, LocalDateTime tranBeginTime, LocalDateTime tranEndTime, String tranId) {}

  /** A row of {@code cdc.ddl_history}; {@code ddlTime} is server-local. */
  record DdlRow(
      String captureInstance,
      String sourceSchema,
      String sourceTable,
      Lsn ddlLsn,
      String ddlCommand,
      LocalDateTime ddlTime,
      boolean requiredColumnUpdate) {}

  final Server server = new Server();

  /** Source tables by lower-case {@code schema.table}, in file order. */
  final Map<String, Table> tables = new LinkedHashMap<>();

  /** Capture instances by name, in file (creation) order. */
  final Map<String, Instance> instances = new LinkedHashMap<>();

  /** True when {@code directory} holds a fake server ({@code server.json}). */
  static boolean exists(Path directory) {
    return Files.isRegularFile(directory.resolve(FakeFormat.SERVER));
  }

  /**
   * Loads the metadata files of a directory.
   *
   * @throws CdcException when {@code server.json} is missing, names a newer format version, or a
   *     file is malformed
   */
  static Catalog load(Path directory) {
    Path serverFile = directory.resolve(FakeFormat.SERVER);
    if (!Files.isRegularFile(serverFile)) {
      throw new CdcException(
          "No fake SQL Server in " + directory + " (" + FakeFormat.SERVER + " is missing)");
    }
    Catalog catalog = new Catalog();
    catalog.readServer(FakeFormat.readJson(serverFile));
    for (JsonNode row : FakeFormat.readAll(directory.resolve(FakeFormat.SYS_TABLES))) {
      String where = FakeFormat.SYS_TABLES;
      Table t =
          new Table(
              FakeFormat.text(row, "schema_name", where), FakeFormat.text(row, "name", where));
      Integer max = FakeFormat.optionalInt(row, "max_column_id_used");
      t.maxColumnIdUsed = max == null ? 0 : max;
      catalog.tables.put(key(t.schema, t.name), t);
    }
    for (JsonNode row : FakeFormat.readAll(directory.resolve(FakeFormat.SYS_COLUMNS))) {
      String where = FakeFormat.SYS_COLUMNS;
      String schema = FakeFormat.text(row, "schema_name", where);
      String tableName = FakeFormat.text(row, "table_name", where);
      Table t =
          catalog.tables.computeIfAbsent(key(schema, tableName), k -> new Table(schema, tableName));
      Integer keyOrdinal = FakeFormat.optionalInt(row, "key_ordinal");
      String name = FakeFormat.text(row, "name", where);
      SqlServerType type = FakeFormat.type(row, where);
      Collation collation;
      try {
        collation =
            Collation.of(name, type, FakeFormat.optionalText(row, FakeFormat.COLLATION_NAME));
      } catch (IllegalArgumentException e) {
        throw new CdcException(where + ": " + e.getMessage(), e);
      }
      Column c =
          new Column(
              name,
              FakeFormat.integer(row, "column_id", where),
              type,
              FakeFormat.bool(row, "is_computed"),
              keyOrdinal == null ? 0 : keyOrdinal,
              collation);
      t.columns.add(c);
      t.maxColumnIdUsed = Math.max(t.maxColumnIdUsed, c.columnId());
    }
    for (Table t : catalog.tables.values()) {
      t.columns.sort(Comparator.comparingInt(Column::columnId));
    }
    for (JsonNode row : FakeFormat.readAll(directory.resolve(FakeFormat.CHANGE_TABLES))) {
      String where = FakeFormat.CHANGE_TABLES;
      Instance i =
          new Instance(
              FakeFormat.text(row, "capture_instance", where),
              FakeFormat.text(row, "source_schema", where),
              FakeFormat.text(row, "source_table", where));
      i.startLsn = FakeFormat.lsn(row, "start_lsn", where);
      i.createDate = FakeFormat.optionalLocal(row, "create_date", where);
      i.supportsNetChanges = FakeFormat.bool(row, "supports_net_changes");
      i.indexName = FakeFormat.optionalText(row, "index_name");
      catalog.instances.put(i.name, i);
    }
    for (JsonNode row : FakeFormat.readAll(directory.resolve(FakeFormat.CAPTURED_COLUMNS))) {
      String where = FakeFormat.CAPTURED_COLUMNS;
      Instance i = catalog.instances.get(FakeFormat.text(row, "capture_instance", where));
      if (i == null) {
        continue;
      }
      Integer columnId = FakeFormat.optionalInt(row, "column_id");
      int ordinal = FakeFormat.integer(row, "column_ordinal", where);
      i.columns.add(
          new Captured(
              FakeFormat.text(row, "column_name", where),
              columnId == null ? -ordinal : columnId,
              ordinal,
              FakeFormat.type(row, where),
              FakeFormat.bool(row, "is_computed")));
    }
    for (JsonNode row : FakeFormat.readAll(directory.resolve(FakeFormat.INDEX_COLUMNS))) {
      String where = FakeFormat.INDEX_COLUMNS;
      Instance i = catalog.instances.get(FakeFormat.text(row, "capture_instance", where));
      if (i == null) {
        continue;
      }
      Integer columnId = FakeFormat.optionalInt(row, "column_id");
      i.indexColumns.add(
          new IndexColumn(
              FakeFormat.text(row, "column_name", where),
              FakeFormat.integer(row, "index_ordinal", where),
              columnId == null ? 0 : columnId));
    }
    for (Instance i : catalog.instances.values()) {
      i.columns.sort(Comparator.comparingInt(Captured::ordinal));
      i.indexColumns.sort(Comparator.comparingInt(IndexColumn::indexOrdinal));
      catalog.resolveMissingColumnIds(i);
    }
    return catalog;
  }

  /**
   * An export may leave out {@code column_id}: such captured columns take the id of the live source
   * column of the same name (or keep a placeholder no live column has, reading NULL).
   */
  private void resolveMissingColumnIds(Instance i) {
    Table t = tables.get(key(i.schema, i.table));
    for (int k = 0; k < i.columns.size(); k++) {
      Captured c = i.columns.get(k);
      if (c.columnId() <= 0 && t != null && t.column(c.name()) != null) {
        i.columns.set(
            k,
            new Captured(
                c.name(), t.column(c.name()).columnId(), c.ordinal(), c.type(), c.computed()));
      }
    }
  }

  private void readServer(JsonNode node) {
    String where = FakeFormat.SERVER;
    server.formatVersion = FakeFormat.integer(node, "format_version", where);
    if (server.formatVersion > FakeFormat.FORMAT_VERSION) {
      throw new CdcException(
          where
              + ": format_version "
              + server.formatVersion
              + " is newer than this reader's "
              + FakeFormat.FORMAT_VERSION);
    }
    String zone = FakeFormat.optionalText(node, "time_zone");
    try {
      server.timeZone = zone == null ? ZoneId.of("UTC") : ZoneId.of(zone);
    } catch (DateTimeException e) {
      throw new CdcException(where + ": time_zone '" + zone + "' is not an IANA zone id", e);
    }
    server.nextLsn =
        FakeFormat.optionalText(node, "next_lsn") == null
            ? FakeSqlServer.FIRST_LSN
            : FakeFormat.lsn(node, "next_lsn", where);
    String clock = FakeFormat.optionalText(node, "clock_utc");
    server.clock = clock == null ? null : Instant.parse(clock);
  }

  /**
   * Only {@code server.json}.
   *
   * @throws CdcException when it is missing, malformed or of a newer format version
   */
  static Server server(Path directory) {
    Catalog catalog = new Catalog();
    catalog.readServer(FakeFormat.readJson(directory.resolve(FakeFormat.SERVER)));
    return catalog.server;
  }

  /** Lower-case {@code schema.table}: the key of {@link #tables}. */
  static String key(String schema, String table) {
    return (schema + "." + table).toLowerCase(Locale.ROOT);
  }

  /** The instances of a table, oldest first by (create date, start LSN), ties in file order. */
  List<Instance> instancesOf(Table table) {
    List<Instance> out = new ArrayList<>();
    for (Instance i : instances.values()) {
      if (i.tracks(table)) {
        out.add(i);
      }
    }
    out.sort(OLDEST_FIRST);
    return out;
  }

  /** Orders instances of one table oldest first: create date (unknown first), then start LSN. */
  static final Comparator<Instance> OLDEST_FIRST =
      Comparator.comparing(
              (Instance i) -> i.createDate, Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(i -> i.startLsn);

  // ---- serialization -------------------------------------------------------------------------

  JsonNode serverJson() {
    ObjectNode n = FakeFormat.object();
    n.put("format_version", FakeFormat.FORMAT_VERSION);
    n.put("time_zone", server.timeZone.getId());
    n.put("next_lsn", server.nextLsn.toString());
    n.put("clock_utc", server.clock == null ? null : server.clock.toString());
    return n;
  }

  List<JsonNode> sysTables() {
    List<JsonNode> rows = new ArrayList<>();
    for (Table t : tables.values()) {
      ObjectNode n = FakeFormat.object();
      n.put("schema_name", t.schema);
      n.put("name", t.name);
      n.put("max_column_id_used", t.maxColumnIdUsed);
      rows.add(n);
    }
    return rows;
  }

  List<JsonNode> sysColumns() {
    List<JsonNode> rows = new ArrayList<>();
    for (Table t : tables.values()) {
      for (Column c : t.columns) {
        ObjectNode n = FakeFormat.object();
        n.put("schema_name", t.schema);
        n.put("table_name", t.name);
        n.put("name", c.name());
        n.put("column_id", c.columnId());
        FakeFormat.putType(n, c.type());
        if (c.collation() != null) {
          n.put(FakeFormat.COLLATION_NAME, c.collation().name());
        }
        n.put("is_computed", c.computed());
        n.put("key_ordinal", c.keyOrdinal());
        rows.add(n);
      }
    }
    return rows;
  }

  List<JsonNode> changeTables() {
    List<JsonNode> rows = new ArrayList<>();
    for (Instance i : instances.values()) {
      ObjectNode n = FakeFormat.object();
      n.put("capture_instance", i.name);
      n.put("source_schema", i.schema);
      n.put("source_table", i.table);
      n.put("start_lsn", i.startLsn.toString());
      n.put("create_date", i.createDate == null ? null : FakeFormat.formatLocal(i.createDate));
      n.put("supports_net_changes", i.supportsNetChanges);
      n.put("index_name", i.indexName);
      rows.add(n);
    }
    return rows;
  }

  List<JsonNode> capturedColumns() {
    List<JsonNode> rows = new ArrayList<>();
    for (Instance i : instances.values()) {
      for (Captured c : i.columns) {
        ObjectNode n = FakeFormat.object();
        n.put("capture_instance", i.name);
        n.put("column_name", c.name());
        n.put("column_id", c.columnId());
        n.put("column_ordinal", c.ordinal());
        FakeFormat.putType(n, c.type());
        n.put("is_computed", c.computed());
        rows.add(n);
      }
    }
    return rows;
  }

  List<JsonNode> indexColumns() {
    List<JsonNode> rows = new ArrayList<>();
    for (Instance i : instances.values()) {
      for (IndexColumn c : i.indexColumns) {
        ObjectNode n = FakeFormat.object();
        n.put("capture_instance", i.name);
        n.put("column_name", c.name());
        n.put("index_ordinal", c.indexOrdinal());
        n.put("column_id", c.columnId());
        rows.add(n);
      }
    }
    return rows;
  }

  static JsonNode mappingJson(MappingRow row) {
    ObjectNode n = FakeFormat.object();
    n.put("start_lsn", row.startLsn().toString());
    n.put("tran_begin_time", FakeFormat.formatLocal(row.tranBeginTime()));
    n.put("tran_end_time", FakeFormat.formatLocal(row.tranEndTime()));
    n.put("tran_id", row.tranId());
    return n;
  }

  static MappingRow mappingRow(JsonNode n, String where) {
    LocalDateTime end = FakeFormat.local(n, "tran_end_time", where);
    LocalDateTime begin = FakeFormat.optionalLocal(n, "tran_begin_time", where);
    String tranId = FakeFormat.optionalText(n, "tran_id");
    return new MappingRow(
        FakeFormat.lsn(n, "start_lsn", where),
        begin == null ? end : begin,
        end,
        tranId == null ? FakeFormat.ZERO_TRAN_ID : tranId);
  }

  static JsonNode ddlJson(DdlRow row) {
    ObjectNode n = FakeFormat.object();
    n.put("capture_instance", row.captureInstance());
    n.put("source_schema", row.sourceSchema());
    n.put("source_table", row.sourceTable());
    n.put("ddl_lsn", row.ddlLsn().toString());
    n.put("ddl_command", row.ddlCommand());
    n.put("ddl_time", FakeFormat.formatLocal(row.ddlTime()));
    n.put("required_column_update", row.requiredColumnUpdate());
    return n;
  }

  static DdlRow ddlRow(JsonNode n, String where) {
    return new DdlRow(
        FakeFormat.text(n, "capture_instance", where),
        FakeFormat.optionalText(n, "source_schema"),
        FakeFormat.optionalText(n, "source_table"),
        FakeFormat.lsn(n, "ddl_lsn", where),
        FakeFormat.text(n, "ddl_command", where),
        FakeFormat.local(n, "ddl_time", where),
        FakeFormat.bool(n, "required_column_update"));
  }
}
