package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;

/**
 * The source tables' key index: a read of a key range starts at the index entry before its lower
 * bound, returns what a scan from the start returns, and raises a malformed or unsorted line's
 * error where a scan from the start raises it.
 */
class SourceTableIndexTest {
  @TempDir Path dir;

  @BeforeEach
  void catalog() throws IOException {
    Files.writeString(dir.resolve(FakeFormat.SERVER), "{\"format_version\":1}");
    Files.writeString(
        dir.resolve(FakeFormat.SYS_TABLES), "{\"schema_name\":\"dbo\",\"name\":\"t\"}\n");
    Files.writeString(
        dir.resolve(FakeFormat.SYS_COLUMNS),
        "{\"schema_name\":\"dbo\",\"table_name\":\"t\",\"name\":\"k\",\"column_id\":1,"
            + "\"column_type\":\"int\",\"key_ordinal\":1}\n"
            + "{\"schema_name\":\"dbo\",\"table_name\":\"t\",\"name\":\"v\",\"column_id\":2,"
            + "\"column_type\":\"varchar\",\"character_maximum_length\":10}\n");
  }

  /**
   * Writes {@code dbo.t.jsonl} with rows {@code 0..rows-1}, line {@code i + 1} from {@code line}.
   */
  private void table(int rows, IntFunction<String> line) throws IOException {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      text.append(line.apply(i)).append('\n');
    }
    Files.writeString(dir.resolve("dbo.t.jsonl"), text);
  }

  private static String row(int k) {
    return "{\"k\":" + k + ",\"v\":\"r" + k + "\"}";
  }

  private List<String> values(Integer lower, Integer upper) {
    return values(dir, lower, upper);
  }

  /** {@code k=v} of the rows of {@code dbo.t} in {@code directory} with keys in [lower, upper). */
  static List<String> values(Path directory, Integer lower, Integer upper) {
    List<String> out = new ArrayList<>();
    try (CdcClient client = new FileBackedCdcClient(directory);
        CloseableIterator<List<Object>> it =
            client.readTable(
                new TableQuery(
                    "dbo",
                    "t",
                    List.of("k", "v"),
                    List.of("k"),
                    Optional.ofNullable(lower).map(List::<Object>of),
                    Optional.ofNullable(upper).map(List::<Object>of),
                    IsolationLevel.READ_COMMITTED))) {
      it.forEachRemaining(r -> out.add(r.get(0) + "=" + r.get(1)));
    }
    return out;
  }

  private SourceTableIndex.Seek seek(int lower) {
    List<Catalog.Column> keys =
        ReaderCache.catalog(dir).tables.get(Catalog.key("dbo", "t")).keyColumns();
    return SourceTableIndex.open(
        dir.resolve("dbo.t.jsonl"),
        keys,
        (n, where) -> KeyTuple.of(keys, List.of(n.get("k").intValue())),
        KeyTuple.of(keys, List.of(lower)));
  }

  @Test
  void aRangeReadStartsAtTheEntryBeforeItsLowerBoundAndReadsWhatAScanReads() throws IOException {
    table(1000, SourceTableIndexTest::row);
    assertEquals(
        List.of("700=r700", "701=r701", "702=r702", "703=r703", "704=r704"), values(700, 705));
    assertEquals(List.of("998=r998", "999=r999"), values(998, null));
    assertEquals(List.of("0=r0", "1=r1"), values(null, 2));
    assertEquals(List.of("0=r0"), values(-5, 1));
    // Entries at rows 0, 256, 512 and 768: a read from 700 starts at row 512's line, after 512
    // lines of 10 * 17 + 90 * 19 + 412 * 21 = 10,532 bytes.
    SourceTableIndex.Seek at700 = seek(700);
    at700.channel().close();
    assertEquals(List.of(10_532L, 512), List.of(at700.offset(), at700.linesBefore()));
    SourceTableIndex.Seek at256 = seek(256);
    at256.channel().close();
    assertEquals(List.of(0L, 0), List.of(at256.offset(), at256.linesBefore()));
    SourceTableIndex.Seek at257 = seek(257);
    at257.channel().close();
    assertEquals(List.of(5_156L, 256), List.of(at257.offset(), at257.linesBefore()));
  }

  @Test
  void anUnsortedLineFailsWhereAScanFromTheStartFailsIt() throws IOException {
    table(1000, i -> row(i == 900 ? 5 : i));
    assertEquals(List.of("100=r100", "101=r101"), values(100, 102));
    assertEquals(List.of("895=r895", "896=r896"), values(895, 897));
    CdcException e = assertThrows(CdcException.class, () -> values(950, 960));
    assertEquals(
        "dbo.t.jsonl:901: source rows must be sorted by their key, each key once, comparing"
            + " character keys under their columns' collations (docs/fake-format.md)",
        e.getMessage());
  }

  @Test
  void aMalformedLineFailsWhereAScanFromTheStartFailsIt() throws IOException {
    table(1000, i -> i == 600 ? "{\"k\":600,\"v\":" : row(i));
    assertEquals(List.of("300=r300"), values(300, 301));
    CdcException e = assertThrows(CdcException.class, () -> values(700, 705));
    assertEquals(
        "dbo.t.jsonl:601: invalid JSON",
        e.getMessage().substring(0, "dbo.t.jsonl:601: invalid JSON".length()));
    table(1000, i -> i == 600 ? "{\"k\":\"x\",\"v\":\"r600\"}" : row(i));
    CdcException value = assertThrows(CdcException.class, () -> values(700, 705));
    assertEquals("dbo.t.jsonl:601: ", value.getMessage().substring(0, 17));
  }

  private List<Catalog.Column> keys() {
    return ReaderCache.catalog(dir).tables.get(Catalog.key("dbo", "t")).keyColumns();
  }

  /** {@link SourceTableIndex#current} of {@code file} under {@code dbo.t}'s key. */
  private SourceTableIndex current(Path file) {
    List<Catalog.Column> keys = keys();
    return SourceTableIndex.current(
        file, keys, (n, where) -> KeyTuple.of(keys, List.of(n.get("k").intValue())));
  }

  @Test
  void aReadOfEveryLineRecordsTheIndexThatABuildWouldMake() throws IOException {
    // Multi-byte values before the seek point: 2 bytes for the é, 4 for the emoji.
    table(1000, i -> "{\"k\":" + i + ",\"v\":\"\u00e9\ud83d\ude00" + i + "\"}");
    Path file = dir.resolve("dbo.t.jsonl");
    assertEquals(null, SourceTableIndex.cached(file, keys()));
    assertEquals(List.of("0=\u00e9\ud83d\ude000"), values(null, 1));
    // A read that stops at an upper bound records nothing.
    assertEquals(null, SourceTableIndex.cached(file, keys()));
    assertEquals(1000, values(null, null).size());
    SourceTableIndex recorded = SourceTableIndex.cached(file, keys());
    assertEquals(
        List.of(4, FileStamp.of(file)), List.of(recorded.entries(), (Object) recorded.stamp));
    SourceTableIndex.Seek at700 = seek(700);
    at700.channel().close();
    // 10 * 22 + 90 * 24 + 412 * 26 bytes before row 512's line.
    assertEquals(List.of(13_092L, 512), List.of(at700.offset(), at700.linesBefore()));
    assertEquals(
        List.of("700=\u00e9\ud83d\ude00700", "701=\u00e9\ud83d\ude00701"), values(700, 702));
    // The same bytes in a new version: built, not recorded, at the same offset.
    table(1000, i -> "{\"k\":" + i + ",\"v\":\"\u00e9\ud83d\ude00" + i + "\"}");
    SourceTableIndex.Seek built = seek(700);
    built.channel().close();
    assertEquals(List.of(13_092L, 512), List.of(built.offset(), built.linesBefore()));
  }

  @Test
  void aFileWithCrLfLineEndsIsNotRecordedAndStillReadsRight() throws IOException {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      text.append(row(i)).append("\r\n");
    }
    Files.writeString(dir.resolve("dbo.t.jsonl"), text);
    assertEquals(1000, values(null, null).size());
    assertEquals(null, SourceTableIndex.cached(dir.resolve("dbo.t.jsonl"), keys()));
    assertEquals(List.of("700=r700", "701=r701"), values(700, 702));
    assertEquals(0, SourceTableIndex.cached(dir.resolve("dbo.t.jsonl"), keys()).entries());
  }

  @Test
  void aRewrittenFileIsIndexedAgain() throws IOException {
    table(1000, SourceTableIndexTest::row);
    assertEquals(List.of("700=r700", "701=r701"), values(700, 702));
    table(1000, i -> row(2 * i));
    assertEquals(List.of("700=r700", "702=r702", "704=r704"), values(699, 705));
    Files.delete(dir.resolve("dbo.t.jsonl"));
    assertEquals(List.of(), values(700, 705));
  }

  /** The planning's queries of the key {@code k}: its range, the row estimate, and slices. */
  private List<Object> planningQueries(long width, long low, long high) {
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      return List.of(
          client.keyRange("dbo", "t", "k", IsolationLevel.READ_COMMITTED).orElseThrow(),
          client.rowEstimate("dbo", "t"),
          client.keySlices("dbo", "t", "k", width, low, high, IsolationLevel.READ_COMMITTED));
    }
  }

  @Test
  void thePlanningQueriesAnswerFromACompleteIndexWhatTheyAnswerFromTheRows() throws IOException {
    // 10,000 rows, keys 0, 3, 6, ..., 29,997: slices of 2,000 keys from 10 to 25,000 hold the
    // multiples of 3 in [max(10, 2000 j), min(25000, 2000 j + 1999)].
    table(10_000, i -> row(3 * i));
    Path file = dir.resolve("dbo.t.jsonl");
    Map<Long, Long> slices = new TreeMap<>();
    slices.put(0L, 663L);
    for (long j = 1; j <= 11; j++) {
      slices.put(j, (2000 * j + 1999) / 3 - (2000 * j - 1) / 3);
    }
    slices.put(12L, 334L);
    List<Object> expected = List.of(List.of(0, 29_997), 10_000L, slices);
    assertEquals(null, current(file));
    // The first query reads every row (and records the index on its way).
    assertEquals(expected, planningQueries(2000, 10, 25_000));
    SourceTableIndex index = current(file);
    assertEquals(
        List.of(true, 10_000L, 40), List.of(index.complete(), index.rows(), index.entries()));
    // Now all three answer from the index: the same values.
    assertEquals(expected, planningQueries(2000, 10, 25_000));
    // Slice edges on index entries (row 256 is key 768) and inside them, a range past the end.
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(
          Map.of(0L, 256L, 1L, 256L, 2L, 256L),
          client.keySlices("dbo", "t", "k", 768, 0, 2303, IsolationLevel.READ_COMMITTED));
      assertEquals(
          Map.of(39L, 10L),
          client.keySlices("dbo", "t", "k", 768, 29_970, 33_000, IsolationLevel.READ_COMMITTED));
      // More slices than the index saves parsing for: read from the rows, the same answer.
      assertEquals(
          Map.of(39L, 10L),
          client.keySlices("dbo", "t", "k", 768, 29_970, 1_000_000, IsolationLevel.READ_COMMITTED));
    }
  }

  @Test
  void anIncompleteIndexLeavesThePlanningQueriesToTheRows() throws IOException {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 10_000; i++) {
      text.append(row(3 * i)).append("\r\n");
    }
    Files.writeString(dir.resolve("dbo.t.jsonl"), text);
    Map<Long, Long> slices = new TreeMap<>();
    slices.put(0L, 334L);
    slices.put(1L, 333L);
    List<Object> expected = List.of(List.of(0, 29_997), 10_000L, slices);
    assertEquals(expected, planningQueries(1000, 0, 1999));
    assertEquals(null, current(dir.resolve("dbo.t.jsonl")));
    assertEquals(expected, planningQueries(1000, 0, 1999));
  }
}
