package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;

/**
 * Character keys compare under the column's collation, as SQL Server compares them
 * (docs/behaviour.md §6.3): key order, key uniqueness, range bounds and key tiles; trailing spaces
 * never count; values are returned as stored.
 */
class CollationTest {
  private static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  @TempDir Path dir;

  /** {@code dbo.<table>}: key {@code k} of {@code keyType}, plus {@code v int}. */
  private FakeSqlServer keyed(String table, ColumnDefinition key, String... keys) {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo." + table, List.of(key, ColumnDefinition.of("v", "int")), List.of(key.name()));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < keys.length; i++) {
      rows.add(Map.of(key.name(), keys[i], "v", i));
    }
    db.loadRows("dbo." + table, rows);
    return db;
  }

  /**
   * The rows {@code [lo, hi)} over {@code keys} of {@code dbo.<table>}, columns {@code columns}.
   */
  private List<List<Object>> read(
      String table, List<String> columns, List<String> keys, List<?> lo, List<?> hi) {
    List<List<Object>> out = new ArrayList<>();
    try (CdcClient client = new FileBackedCdcClient(dir);
        CloseableIterator<List<Object>> it =
            client.readTable(
                new TableQuery(
                    "dbo",
                    table,
                    columns,
                    keys,
                    Optional.ofNullable(lo).map(l -> List.<Object>copyOf(l)),
                    Optional.ofNullable(hi).map(h -> List.<Object>copyOf(h)),
                    RC))) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  private List<Object> keysOf(String table, List<?> lo, List<?> hi) {
    return read(table, List.of("k"), List.of("k"), lo, hi).stream().map(r -> r.get(0)).toList();
  }

  private List<String> fileKeys(String table) throws IOException {
    List<String> out = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("dbo." + table + ".jsonl"))) {
      out.add(FakeFormat.MAPPER.readTree(line).get("k").asText());
    }
    return out;
  }

  @Test
  void caseInsensitiveKeysSortIgnoringCaseAndBinaryKeysByCodeUnit() throws IOException {
    FakeSqlServer db = keyed("ci", ColumnDefinition.of("k", "varchar(10)"), "c", "B", "a");
    db.createTable(
        "dbo.bin",
        List.of(
            ColumnDefinition.of("k", "varchar(10)").collate("Latin1_General_BIN2"),
            ColumnDefinition.of("v", "int")),
        List.of("k"));
    db.loadRows("dbo.bin", List.of(Map.of("k", "c"), Map.of("k", "B"), Map.of("k", "a")));

    assertEquals(List.of("a", "B", "c"), keysOf("ci", null, null));
    assertEquals(List.of("a", "B", "c"), fileKeys("ci"));
    assertEquals(List.of("a", "B", "c"), db.rows("dbo.ci").stream().map(r -> r.get("k")).toList());
    assertEquals(List.of("B", "a", "c"), keysOf("bin", null, null));
    assertEquals(List.of("B", "a", "c"), fileKeys("bin"));
    // Bounds compare under the collation: 'b' <= 'B' under CI, 'b' > 'B' under BIN2.
    assertEquals(List.of("B", "c"), keysOf("ci", List.of("b"), null));
    assertEquals(List.of("a"), keysOf("ci", null, List.of("b")));
    assertEquals(List.of("c"), keysOf("bin", List.of("b"), null));
    assertEquals(List.of("B", "a"), keysOf("bin", null, List.of("b")));
  }

  @Test
  void aKeyEqualToAnotherIgnoringCaseIsADuplicateKeyAndStatementsFindItsRow() {
    FakeSqlServer db = keyed("t", ColumnDefinition.of("k", "varchar(10)"), "n", "m");
    IllegalArgumentException dup =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.transaction(T0).insert("dbo.t", Map.of("k", "N", "v", 9)).commit());
    assertEquals(
        "Violation of PRIMARY KEY constraint 'PK_t'. Cannot insert duplicate key in object"
            + " 'dbo.t'. The duplicate key value is (N).",
        dup.getMessage());
    IllegalArgumentException inOneLoad =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.loadRows("dbo.t", List.of(Map.of("k", "x"), Map.of("k", "X"))));
    assertEquals(
        "Violation of PRIMARY KEY constraint 'PK_t'. Cannot insert duplicate key in object"
            + " 'dbo.t'. The duplicate key value is (X).",
        inOneLoad.getMessage());
    // WHERE k = 'N' finds the row 'n' under CI; the stored value stays 'n'.
    db.transaction(T0).update("dbo.t", List.of("N"), Map.of("v", 7)).commit();
    assertEquals(List.of(Map.of("k", "m", "v", 1), Map.of("k", "n", "v", 7)), db.rows("dbo.t"));
    db.transaction(T0.plusSeconds(1)).delete("dbo.t", List.of("M")).commit();
    assertEquals(List.of(Map.of("k", "n", "v", 7)), db.rows("dbo.t"));
    // A case-sensitive key holds both.
    db.createTable(
        "dbo.cs",
        List.of(ColumnDefinition.of("k", "varchar(10) COLLATE SQL_Latin1_General_CP1_CS_AS")),
        List.of("k"));
    db.loadRows("dbo.cs", List.of(Map.of("k", "b"), Map.of("k", "A"), Map.of("k", "a")));
    assertEquals(List.of("a", "A", "b"), keysOf("cs", null, null));
  }

  /**
   * {@code UPDATE t SET k = 'N' WHERE k = 'n'} under CI changes the row's stored key in place: the
   * same key under the collation, so an update (operations 3 and 4), not a duplicate key.
   */
  @Test
  void anUpdateToAKeyEqualUnderTheCollationIsAnUpdateOfTheSameRow() throws IOException {
    FakeSqlServer db = keyed("t", ColumnDefinition.of("k", "varchar(10)"), "n", "m");
    db.enableCdc("dbo.t");
    db.transaction(T0).update("dbo.t", List.of("n"), Map.of("k", "N")).commit();
    assertEquals(List.of(Map.of("k", "m", "v", 1), Map.of("k", "N", "v", 0)), db.rows("dbo.t"));
    List<String> changes = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("cdc.dbo_t_CT.jsonl"))) {
      var n = FakeFormat.MAPPER.readTree(line);
      changes.add(n.get("__$operation").asInt() + ":" + n.get("k").asText());
    }
    assertEquals(List.of("3:n", "4:N"), changes);
    assertEquals(List.of("m", "N"), fileKeys("t"));
  }

  @Test
  void c112TrailingSpacesNeverCountInKeysOrBounds() {
    FakeSqlServer db = keyed("t", ColumnDefinition.of("k", "varchar(10)"), "ab", "b", "a");
    IllegalArgumentException dup =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.transaction(T0).insert("dbo.t", Map.of("k", "ab  ", "v", 9)).commit());
    assertEquals(
        "Violation of PRIMARY KEY constraint 'PK_t'. Cannot insert duplicate key in object"
            + " 'dbo.t'. The duplicate key value is (ab  ).",
        dup.getMessage());
    assertEquals(List.of("ab", "b"), keysOf("t", List.of("ab "), null));
    assertEquals(List.of("a"), keysOf("t", null, List.of("ab   ")));
    // Binary collations pad too; a char(n) key is stored padded and returned as stored.
    db.createTable(
        "dbo.c",
        List.of(ColumnDefinition.of("k", "char(4)").collate("Latin1_General_BIN2")),
        List.of("k"));
    db.loadRows("dbo.c", List.of(Map.of("k", "ab"), Map.of("k", "a")));
    assertThrows(
        IllegalArgumentException.class, () -> db.loadRows("dbo.c", List.of(Map.of("k", "ab "))));
    assertEquals(List.of("ab  "), keysOf("c", List.of("ab"), null));
    assertEquals(List.of("a   "), keysOf("c", null, List.of("ab")));
  }

  @Test
  void accentInsensitiveKeysTreatAccentedLettersAsTheirBaseLetter() {
    FakeSqlServer db =
        keyed("ai", ColumnDefinition.of("k", "nvarchar(10)").collate("Latin1_General_CI_AI"), "é");
    IllegalArgumentException dup =
        assertThrows(
            IllegalArgumentException.class, () -> db.loadRows("dbo.ai", List.of(Map.of("k", "E"))));
    assertEquals(
        "Violation of PRIMARY KEY constraint 'PK_ai'. Cannot insert duplicate key in object"
            + " 'dbo.ai'. The duplicate key value is (E).",
        dup.getMessage());
    assertEquals(List.of("é"), keysOf("ai", List.of("e"), List.of("f")));
    assertEquals(List.of(), keysOf("ai", List.of("E"), List.of("e ")));
    assertEquals(List.of(), keysOf("ai", null, List.of("E")));
    // Accent-sensitive (the default): 'e' < 'é' < 'f', distinct keys.
    db.createTable(
        "dbo.as",
        List.of(ColumnDefinition.of("k", "nvarchar(10)"), ColumnDefinition.of("v", "int")),
        List.of("k"));
    db.loadRows(
        "dbo.as", List.of(Map.of("k", "f"), Map.of("k", "é"), Map.of("k", "E"), Map.of("k", "d")));
    assertEquals(List.of("d", "E", "é", "f"), keysOf("as", null, null));
    assertEquals(List.of("é", "f"), keysOf("as", List.of("É"), null));
  }

  @Test
  void nullsSortFirstUnderEveryCollation() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.t",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(10)")),
        List.of("id"));
    List<Map<String, Object>> rows = new ArrayList<>();
    String[] names = {"b", null, "A", "a ", null, "C"};
    for (int i = 0; i < names.length; i++) {
      Map<String, Object> row = new HashMap<>();
      row.put("id", i);
      row.put("name", names[i]);
      rows.add(row);
    }
    db.loadRows("dbo.t", rows);
    // Ordered over the non-key column: NULL first, then CI order; equal names keep file order.
    assertEquals(
        List.of(
            Arrays.asList(1, null),
            Arrays.asList(4, null),
            List.of(2, "A"),
            List.of(3, "a "),
            List.of(0, "b"),
            List.of(5, "C")),
        read("t", List.of("id", "name"), List.of("name"), null, null));
    assertEquals(
        List.of(List.of(2, "A"), List.of(3, "a ")),
        read("t", List.of("id", "name"), List.of("name"), List.of("a"), List.of("B")));
  }

  /**
   * Keys {@code (name varchar CI_AS, n int)} where names equal under CI are made distinct by {@code
   * n}: every tiling of every size, and ranges cut at bounds of any case, read each row exactly
   * once.
   */
  @Test
  void c112RangesAtAnyTilingCoverACaseInsensitiveCompositeKeySetExactlyOnce() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.t",
        List.of(ColumnDefinition.of("name", "varchar(10)"), ColumnDefinition.of("n", "int")),
        List.of("name", "n"));
    Object[][] keys = {
      {"n", 1}, {"N", 2}, {"n ", 3}, {"a", 2}, {"A", 1}, {"b", 1}, {"B ", 2}, {"ñ", 1}, {"Ñ", 2},
      {"o", 1}, {"ab", 1}, {"AB", 2}, {"z", 1}
    };
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Object[] k : keys) {
      rows.add(Map.of("name", k[0], "n", k[1]));
    }
    db.loadRows("dbo.t", rows);
    List<String> key = List.of("name", "n");
    List<List<Object>> all = read("t", key, key, null, null);
    assertEquals(
        List.of(
            List.of("A", 1),
            List.of("a", 2),
            List.of("ab", 1),
            List.of("AB", 2),
            List.of("b", 1),
            List.of("B ", 2),
            List.of("n", 1),
            List.of("N", 2),
            List.of("n ", 3),
            List.of("ñ", 1),
            List.of("Ñ", 2),
            List.of("o", 1),
            List.of("z", 1)),
        all);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      for (int tiles = 1; tiles <= keys.length + 2; tiles++) {
        List<List<Object>> bounds = client.keyTiles("dbo", "t", key, tiles, RC);
        assertEquals(Math.min(tiles, keys.length) - 1, bounds.size(), "tiles " + tiles);
        assertEquals(all, readAcross(key, bounds), "tiles " + tiles);
      }
    }
    // Bounds spelled in another case or with trailing spaces cut at the same place.
    assertEquals(
        all, readAcross(key, List.of(List.of("AB", 1), List.of("N ", 2), List.of("Ñ", 1))));
    assertEquals(
        List.of(List.of("N", 2), List.of("n ", 3)),
        read("t", key, key, List.of("N ", 2), List.of("ñ", 1)));
    assertEquals(
        List.of(List.of("ab", 1), List.of("AB", 2)),
        read("t", key, key, List.of("AB", 1), List.of("b", 0)));
  }

  /**
   * The chunk planner (docs/behaviour.md §6.8) over case-variant and trailing-space keys, one
   * column and composite: at every chunk size the chunks {@code [lo, hi)} read every row exactly
   * once, in key order, because every bound is compared by the server (here the simulator) under
   * the collation.
   */
  @Test
  void c112ChunkPlansOverCaseInsensitiveKeysReadEveryRowExactlyOnce() {
    FakeSqlServer db =
        keyed(
            "one", ColumnDefinition.of("k", "varchar(10)"), "d ", "B", "a", "C", "e", "Ab", "f  ");
    db.createTable(
        "dbo.t",
        List.of(ColumnDefinition.of("name", "varchar(10)"), ColumnDefinition.of("n", "int")),
        List.of("name", "n"));
    Object[][] keys = {{"n", 1}, {"N", 2}, {"n ", 3}, {"a", 2}, {"A", 1}, {"b ", 1}, {"B", 2}};
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Object[] k : keys) {
      rows.add(Map.of("name", k[0], "n", k[1]));
    }
    db.loadRows("dbo.t", rows);
    org.lakecdc.io.mssqlcdc.schema.SqlServerType varchar =
        org.lakecdc.io.mssqlcdc.schema.SqlServerType.parse("varchar(10)");
    org.lakecdc.io.mssqlcdc.schema.SqlServerType integer =
        org.lakecdc.io.mssqlcdc.schema.SqlServerType.parse("int");
    Object[][] tables = {
      {"one", List.of("k"), List.of(varchar)},
      {"t", List.of("name", "n"), List.of(varchar, integer)}
    };
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      for (Object[] table : tables) {
        String name = (String) table[0];
        @SuppressWarnings("unchecked")
        List<String> key = (List<String>) table[1];
        @SuppressWarnings("unchecked")
        List<org.lakecdc.io.mssqlcdc.schema.SqlServerType> types =
            (List<org.lakecdc.io.mssqlcdc.schema.SqlServerType>) table[2];
        List<List<Object>> all = read(name, key, key, null, null);
        assertEquals(7, all.size());
        org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner planner =
            new org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner(client, "dbo", name, key, types, RC);
        org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent extent = planner.extent();
        assertEquals(all.get(all.size() - 1), extent.max(), name);
        for (long chunkRows = 1; chunkRows <= 8; chunkRows++) {
          List<List<Object>> chunked = new ArrayList<>();
          List<org.lakecdc.io.mssqlcdc.chunk.Chunk> plan = planner.plan(extent, chunkRows);
          for (org.lakecdc.io.mssqlcdc.chunk.Chunk c : plan) {
            List<List<Object>> part = read(name, key, key, c.lo(), c.hi());
            // The keyset plan seeks bounds in [lo, MAX): the last chunk also holds MAX.
            long most = c.index() == plan.size() - 1 ? chunkRows + 1 : chunkRows;
            assertTrue(
                part.size() <= most, name + " chunk " + c + " of " + chunkRows + ": " + part);
            chunked.addAll(part);
          }
          assertEquals(all, chunked, name + " in chunks of " + chunkRows + ": " + plan);
        }
      }
    }
    assertEquals(List.of("a", "Ab", "B", "C", "d ", "e", "f  "), keysOf("one", null, null));
  }

  /** Every row of {@code dbo.t} over the ranges the bounds cut, in range order. */
  private List<List<Object>> readAcross(List<String> key, List<List<Object>> bounds) {
    List<List<Object>> out = new ArrayList<>();
    for (int i = 0; i <= bounds.size(); i++) {
      out.addAll(
          read(
              "t",
              key,
              key,
              i == 0 ? null : bounds.get(i - 1),
              i == bounds.size() ? null : bounds.get(i)));
    }
    return out;
  }

  @Test
  void theCollationIsStoredInSysColumnsAndKeptWhenTheDirectoryIsReopened() throws IOException {
    FakeSqlServer db =
        keyed("bin", ColumnDefinition.of("k", "varchar(10)").collate("Latin1_General_BIN2"), "a");
    List<String> columns = Files.readAllLines(dir.resolve(FakeFormat.SYS_COLUMNS));
    assertEquals(
        List.of(
            "{\"schema_name\":\"dbo\",\"table_name\":\"bin\",\"name\":\"k\",\"column_id\":1,"
                + "\"column_type\":\"varchar\",\"character_maximum_length\":10,"
                + "\"collation_name\":\"Latin1_General_BIN2\",\"is_computed\":false,"
                + "\"key_ordinal\":1}",
            "{\"schema_name\":\"dbo\",\"table_name\":\"bin\",\"name\":\"v\",\"column_id\":2,"
                + "\"column_type\":\"int\",\"is_computed\":false,\"key_ordinal\":0}"),
        columns);
    FakeSqlServer again = FakeSqlServer.open(dir);
    again.loadRows("dbo.bin", List.of(Map.of("k", "B"), Map.of("k", "A")));
    assertEquals(List.of("A", "B", "a"), keysOf("bin", null, null));
    again.ddl("dbo.bin", "ALTER TABLE dbo.bin ADD note varchar(5) COLLATE Latin1_General_CS_AI");
    assertTrue(
        Files.readString(dir.resolve(FakeFormat.SYS_COLUMNS), StandardCharsets.UTF_8)
            .contains(
                "\"name\":\"note\",\"column_id\":3,\"column_type\":\"varchar\","
                    + "\"character_maximum_length\":5,\"collation_name\":\"Latin1_General_CS_AI\""));
  }

  @Test
  void aColumnWithoutCollationNameHasTheDefaultAndAFileOutOfCollationOrderFails()
      throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(FakeFormat.SERVER), "{\"format_version\":1}");
    Files.writeString(
        dir.resolve(FakeFormat.SYS_TABLES), "{\"schema_name\":\"dbo\",\"name\":\"t\"}\n");
    Files.writeString(
        dir.resolve(FakeFormat.SYS_COLUMNS),
        "{\"schema_name\":\"dbo\",\"table_name\":\"t\",\"name\":\"k\",\"column_id\":1,"
            + "\"column_type\":\"varchar\",\"character_maximum_length\":10,\"key_ordinal\":1}\n");
    Files.writeString(dir.resolve("dbo.t.jsonl"), "{\"k\":\"a\"}\n{\"k\":\"B\"}\n{\"k\":\"c\"}\n");
    assertEquals(List.of("a", "B", "c"), keysOf("t", null, null));
    assertEquals(List.of("B", "c"), keysOf("t", List.of("b"), null));
    Files.writeString(dir.resolve("dbo.t.jsonl"), "{\"k\":\"a\"}\n{\"k\":\"A \"}\n");
    CdcException twice = assertThrows(CdcException.class, () -> keysOf("t", null, null));
    assertEquals(
        "dbo.t.jsonl:2: source rows must be sorted by their key, each key once, comparing character"
            + " keys under their columns' collations (docs/fake-format.md)",
        twice.getMessage());
    Files.writeString(
        dir.resolve(FakeFormat.SYS_COLUMNS),
        "{\"schema_name\":\"dbo\",\"table_name\":\"t\",\"name\":\"k\",\"column_id\":1,"
            + "\"column_type\":\"varchar\",\"collation_name\":\"Latin1_General\",\"key_ordinal\":1}\n");
    CdcException unknown = assertThrows(CdcException.class, () -> keysOf("t", null, null));
    assertEquals(
        "sys.columns.jsonl: Collation 'Latin1_General' is not understood by the fake: give a SQL"
            + " Server collation name with _CI or _CS and _AI or _AS (e.g."
            + " SQL_Latin1_General_CP1_CI_AS), or one ending _BIN or _BIN2",
        unknown.getMessage());
  }

  @Test
  void aCollationMustFitTheTypeAndBeUnderstood() {
    IllegalArgumentException onInt =
        assertThrows(
            IllegalArgumentException.class,
            () -> ColumnDefinition.of("id", "int").collate("Latin1_General_BIN2"));
    assertEquals(
        "Column 'id' (int) cannot have collation 'Latin1_General_BIN2': only char, varchar, nchar,"
            + " nvarchar, text, ntext and sysname columns have one",
        onInt.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> ColumnDefinition.of("k", "varchar(5) COLLATE Latin1_General_CI"));
    assertEquals(
        "Latin1_General_100_CS_AS_SC_UTF8",
        ColumnDefinition.of("k", "nvarchar(5) collate Latin1_General_100_CS_AS_SC_UTF8")
            .collation());
    FakeSqlServer db = keyed("t", ColumnDefinition.of("k", "varchar(10)"), "a");
    assertThrows(
        IllegalArgumentException.class,
        () -> db.ddl("dbo.t", "ALTER TABLE dbo.t ADD n int COLLATE Latin1_General_BIN2"));
  }
}
