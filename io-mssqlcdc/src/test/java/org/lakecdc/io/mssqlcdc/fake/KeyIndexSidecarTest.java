package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner;
import org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The key index the writer writes beside a source table file ({@link SourceTableIndex.Sidecar}): a
 * range read in a JVM that has not indexed the file seeks from it without parsing the lines before
 * its lower bound, and a sidecar of another version of the file is never used.
 */
class KeyIndexSidecarTest {
  private static final int ROWS = 10_000;

  @TempDir Path dir;

  /** Where the copy a writer changes is made, for {@link FakeSqlServer#copyOver}. */
  @TempDir Path complete;

  private Path file;
  private Path sidecar;

  @BeforeEach
  void paths() {
    file = dir.resolve("dbo.t.jsonl");
    sidecar = dir.resolve(".dbo.t.jsonl.keys");
  }

  private static Map<String, Object> row(int k) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("k", k);
    row.put("v", "r" + k);
    return row;
  }

  private FakeSqlServer table(Path directory, int rows) {
    FakeSqlServer db = FakeSqlServer.open(directory);
    db.createTable(
        "dbo.t",
        List.of(ColumnDefinition.of("k", "int"), ColumnDefinition.of("v", "varchar(10)")),
        List.of("k"));
    db.loadRowsInKeyOrder("dbo.t", LargeTableTest.generated(rows, KeyIndexSidecarTest::row));
    return db;
  }

  /** {@code k=v} of the rows with keys in {@code [lower, upper)}, read in a new JVM's cache. */
  private List<String> values(int lower, int upper) {
    SourceTableIndex.forgetAll();
    return SourceTableIndexTest.values(dir, lower, upper);
  }

  /** The lines {@link SourceTableIndex#build} parses for {@code read}. */
  private static long linesBuiltBy(Runnable read) {
    long before = SourceTableIndex.linesBuilt();
    read.run();
    return SourceTableIndex.linesBuilt() - before;
  }

  /** Where a read from {@code lower} starts, in a new JVM's cache: {offset, lines before}. */
  private List<Long> seek(int lower) throws IOException {
    SourceTableIndex.forgetAll();
    List<Catalog.Column> keys =
        ReaderCache.catalog(dir).tables.get(Catalog.key("dbo", "t")).keyColumns();
    SourceTableIndex.Seek seek =
        SourceTableIndex.open(
            file,
            keys,
            (n, where) -> KeyTuple.of(keys, List.of(n.get("k").intValue())),
            KeyTuple.of(keys, List.of(lower)));
    seek.channel().close();
    return List.of(seek.offset(), (long) seek.linesBefore());
  }

  /** The byte offset of line {@code line} (1-based) of {@code file}. */
  private long offsetOfLine(int line) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    int seen = 1;
    for (int i = 0; i < bytes.length && seen < line; i++) {
      if (bytes[i] == '\n') {
        seen++;
        if (seen == line) {
          return i + 1;
        }
      }
    }
    return 0;
  }

  @Test
  void aRangeReadOfAWrittenFileSeeksFromItsSidecarWithoutParsingTheFile() throws IOException {
    table(dir, ROWS);
    assertTrue(Files.exists(sidecar), "the writer wrote the key index beside the file");
    assertEquals(
        0,
        linesBuiltBy(() -> assertEquals(List.of("7000=r7000", "7001=r7001"), values(7000, 7002))));
    // Entries every 256 rows: the read from key 7000 (line 7001) starts at row 6912's line, so 88
    // lines are parsed before its lower bound.
    assertEquals(List.of(offsetOfLine(6913), 6912L), seek(7000));
    assertEquals(List.of(0L, 0L), seek(256));
    assertEquals(List.of(offsetOfLine(9985), 9984L), seek(9999));
    // The sidecar: a header and 40 entries (rows 0, 256, ..., 9984).
    try (Stream<String> lines = Files.lines(sidecar, StandardCharsets.UTF_8)) {
      assertEquals(41, lines.count());
    }
  }

  @Test
  void thePlanningQueriesAnswerFromTheSidecarWithoutReadingTheTable() throws IOException {
    table(dir, ROWS);
    // The sidecar's row count made one more than the file's: an answer of 10,001 came from it.
    Files.writeString(
        sidecar, Files.readString(sidecar).replaceFirst("\"rows\":10000,", "\"rows\":10001,"));
    SourceTableIndex.forgetAll();
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(10_001L, client.rowEstimate("dbo", "t"));
      assertEquals(
          Optional.of(List.of(0, 9999)),
          client.keyRange("dbo", "t", "k", IsolationLevel.READ_COMMITTED));
    }
  }

  @Test
  void aSidecarOfAnotherVersionIsNeverUsed() throws IOException {
    FakeSqlServer db = table(dir, ROWS);
    Path old = dir.resolve("old-sidecar");
    Files.copy(sidecar, old);
    // The same bytes in another file: a version the sidecar does not name.
    Path copy = dir.resolve("copy");
    Files.copy(file, copy);
    Files.move(copy, file, StandardCopyOption.REPLACE_EXISTING);
    assertEquals(
        ROWS,
        linesBuiltBy(() -> assertEquals(List.of("7000=r7000", "7001=r7001"), values(7000, 7002))));
    // Other rows written by hand, with the first version's sidecar put back: keys 0, 2, 4, ...
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < ROWS; i++) {
      text.append("{\"k\":").append(2 * i).append(",\"v\":\"r").append(2 * i).append("\"}\n");
    }
    Files.writeString(file, text);
    Files.copy(old, sidecar, StandardCopyOption.REPLACE_EXISTING);
    assertEquals(
        ROWS,
        linesBuiltBy(
            () ->
                assertEquals(
                    List.of("7000=r7000", "7002=r7002", "7004=r7004"), values(7000, 7005))));
    // The writer's next write of the table writes a current sidecar again.
    db = FakeSqlServer.open(dir);
    db.transaction().insert("dbo.t", row(7001)).commit();
    assertEquals(
        0,
        linesBuiltBy(
            () ->
                assertEquals(
                    List.of("7000=r7000", "7001=r7001", "7002=r7002"), values(7000, 7003))));
  }

  @Test
  void aSmallTableHasNoSidecarAndATableThatShrinksLosesIt() {
    FakeSqlServer db = table(dir, SourceTableIndex.EVERY + 1);
    assertTrue(Files.exists(sidecar));
    db.transaction().delete("dbo.t", List.of(3)).commit();
    assertFalse(Files.exists(sidecar), "256 rows: a pass is short");
    assertEquals(
        SourceTableIndex.EVERY,
        linesBuiltBy(() -> assertEquals(List.of("2=r2", "4=r4"), values(2, 5))));
  }

  @Test
  void aCopiedOverTableKeepsItsKeyIndex() throws IOException {
    table(dir, ROWS);
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (!f.getFileName().toString().startsWith(".")) {
          Files.copy(f, complete.resolve(f.getFileName()));
        }
      }
    }
    FakeSqlServer.open(complete).transaction().delete("dbo.t", List.of(7001)).commit();
    FakeSqlServer.copyOver(complete, dir);
    assertEquals(
        0,
        linesBuiltBy(() -> assertEquals(List.of("7000=r7000", "7002=r7002"), values(7000, 7003))));
  }

  /**
   * A table of {@code rows} rows under the two-column key {@code (a, b)}: row i is (i / 10, i %
   * 10).
   */
  private void twoColumnTable(int rows) {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.p",
        List.of(
            ColumnDefinition.of("a", "int"),
            ColumnDefinition.of("b", "int"),
            ColumnDefinition.of("v", "varchar(10)")),
        List.of("a", "b"));
    db.loadRowsInKeyOrder(
        "dbo.p",
        LargeTableTest.generated(
            rows,
            i -> {
              Map<String, Object> row = new LinkedHashMap<>();
              row.put("a", i / 10);
              row.put("b", i % 10);
              row.put("v", "r" + i);
              return row;
            }));
  }

  /** The keyset plan of {@code dbo.p} at 3,000 rows a chunk, in a new JVM's cache. */
  private List<Chunk> twoColumnPlan() {
    SourceTableIndex.forgetAll();
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      ChunkPlanner planner =
          new ChunkPlanner(
              client,
              "dbo",
              "p",
              List.of("a", "b"),
              List.of(SqlServerType.of("int"), SqlServerType.of("int")),
              IsolationLevel.READ_COMMITTED);
      SnapshotExtent extent = planner.extent();
      assertEquals(List.of(999, 9), extent.max());
      return planner.plan(extent, 3_000);
    }
  }

  @Test
  void aTwoColumnKeysPlanIsSoughtFromTheSidecarAsFromTheTable() throws IOException {
    twoColumnTable(ROWS);
    Path keys = dir.resolve(".dbo.p.jsonl.keys");
    assertTrue(Files.exists(keys), "the writer wrote the key index beside the file");
    // Each bound is the 3,001st key from the one before: rows 3000, 6000 and 9000; the last chunk
    // is open (no key after MAX).
    List<Chunk> expected =
        List.of(
            new Chunk(0, null, List.of(300, 0)),
            new Chunk(1, List.of(300, 0), List.of(600, 0)),
            new Chunk(2, List.of(600, 0), List.of(900, 0)),
            new Chunk(3, List.of(900, 0), null));
    assertEquals(0, linesBuiltBy(() -> assertEquals(expected, twoColumnPlan())));
    // Without the sidecar the planner reads the table (its first pass records the index) and
    // finds the same bounds.
    Files.delete(keys);
    assertEquals(expected, twoColumnPlan());
  }

  @Test
  void aTwoColumnKeysMaxAndBoundsComeFromTheSidecar() throws IOException {
    twoColumnTable(ROWS);
    Path keys = dir.resolve(".dbo.p.jsonl.keys");
    // The sidecar's last key made one the table does not hold: an answer of (1000, 0) came from it.
    Files.writeString(
        keys,
        Files.readString(keys)
            .replaceFirst(
                "\"last_key\":\\{\"a\":999,\"b\":9}", "\"last_key\":{\"a\":1000,\"b\":0}"));
    SourceTableIndex.forgetAll();
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      IsolationLevel rc = IsolationLevel.READ_COMMITTED;
      assertEquals(Optional.of(List.of(1000, 0)), client.keyMax("dbo", "p", List.of("a", "b"), rc));
      // A bound 10 rows after (42, 7), below (43, 9): (43, 7); none at or past the upper bound.
      Optional<List<Object>> lower = Optional.of(List.of(42, 7));
      assertEquals(
          Optional.of(List.of(43, 7)),
          client.keyBound(
              "dbo", "p", List.of("a", "b"), lower, Optional.of(List.of(43, 9)), 10, rc));
      assertEquals(
          Optional.empty(),
          client.keyBound(
              "dbo", "p", List.of("a", "b"), lower, Optional.of(List.of(43, 9)), 12, rc));
      // From the table's first key, a bound in the last entry's rows: row 9,990 is (999, 0).
      assertEquals(
          Optional.of(List.of(999, 0)),
          client.keyBound(
              "dbo", "p", List.of("a", "b"), Optional.empty(), Optional.empty(), 9_990, rc));
      assertEquals(
          Optional.empty(),
          client.keyBound(
              "dbo", "p", List.of("a", "b"), Optional.empty(), Optional.empty(), 10_000, rc));
    }
  }
}
