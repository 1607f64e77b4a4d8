package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.silver.DeletionVectors;

/**
 * {@link ParquetRowsAt} against Kernel's Parquet reader on the same file: every output type a table
 * can hold (decimals of each physical layout, dates and timestamps before 1970, binary, NULLs,
 * dictionary-encoded and plain columns) over several row groups and pages, and through {@link
 * TableDeletionVectors#readLiveRowsAt} with a deletion vector.
 */
class ParquetRowsAtTest {
  @TempDir Path dir;

  private static final int ROWS = 3000;

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, null),
          DeltaColumn.nullable("flag", OutputType.BOOLEAN, null),
          DeltaColumn.nullable("small", OutputType.SMALLINT, null),
          DeltaColumn.nullable("num", OutputType.INT, null),
          DeltaColumn.nullable("big", OutputType.BIGINT, null),
          DeltaColumn.nullable("f", OutputType.FLOAT, null),
          DeltaColumn.nullable("d", OutputType.DOUBLE, null),
          DeltaColumn.nullable("dec9", OutputType.decimal(9, 2), null),
          DeltaColumn.nullable("dec18", OutputType.decimal(18, 6), null),
          DeltaColumn.nullable("dec38", OutputType.decimal(38, 10), null),
          DeltaColumn.nullable("day", OutputType.DATE, null),
          DeltaColumn.nullable("ntz", OutputType.TIMESTAMP_NTZ, null),
          DeltaColumn.nullable("ts", OutputType.TIMESTAMP, null),
          DeltaColumn.nullable("label", OutputType.STRING, null),
          DeltaColumn.nullable("text", OutputType.STRING, null),
          DeltaColumn.nullable("bytes", OutputType.BINARY, null));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private static final List<String> NAMES =
      COLUMNS.stream().map(DeltaColumn::name).collect(Collectors.toList());

  /** Small row groups and pages, so that a file of 3,000 rows has several of each. */
  private final DeltaTables tables = tables(Map.of());

  private static DeltaTables tables(Map<String, String> more) {
    Map<String, String> conf = new java.util.HashMap<>(more);
    conf.putAll(
        Map.of(
            "parquet.block.size", "16384",
            "parquet.page.size", "1024",
            "parquet.page.size.row.check.min", "10",
            "parquet.page.size.row.check.max", "10"));
    return DeltaTables.create(conf);
  }

  private static Row row(long i) {
    int n = (int) i;
    return Row.withSchema(SCHEMA)
        .addValues(
            i,
            n % 3 == 0 ? null : n % 2 == 0,
            n % 7 == 0 ? null : (short) (n - 1500),
            n % 10,
            n % 11 == 0 ? null : i * 1_000_000_007L - 900_000_000_000L,
            n / 4f,
            n % 13 == 0 ? null : n / 3.0,
            BigDecimal.valueOf(n * 101L - 50_000, 2),
            n % 5 == 0 ? null : BigDecimal.valueOf(i * 123_456_789L - 7, 6),
            new BigDecimal("-1234567890123456789.0123456789").add(BigDecimal.valueOf(i * 997L)),
            LocalDate.of(1500, 1, 1).plusDays(i * 97),
            LocalDateTime.of(1969, 12, 31, 23, 59, 59).plusNanos(i * 123_457_000L),
            n % 17 == 0 ? null : Instant.parse("1960-06-01T00:00:00Z").plusNanos(i * 987_654_000L),
            n % 5 == 0 ? null : "név " + (n % 40),
            "row " + n + " ü€ " + "x".repeat(n % 30),
            n % 9 == 0 ? null : ("b" + n).getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private String table() {
    return table(tables, "t");
  }

  private String table(DeltaTables tables, String name) {
    String path = dir.resolve(name).toString();
    tables.createIfAbsent(
        path,
        new TableDefinition(
            TableKind.SILVER, COLUMNS, "test", Map.of("delta.enableDeletionVectors", "true")));
    List<Row> rows = new ArrayList<>();
    for (long i = 0; i < ROWS; i++) {
      rows.add(row(i));
    }
    tables.append(path, SCHEMA, rows, null, 0, Map.of());
    return path;
  }

  private static String render(long position, Object[] values) {
    List<String> out = new ArrayList<>();
    out.add(String.valueOf(position));
    for (Object value : values) {
      out.add(
          value == null
              ? "null"
              : value.getClass().getSimpleName()
                  + "="
                  + (value instanceof byte[] ? HexFormat.of().formatHex((byte[]) value) : value));
    }
    return String.join("|", out);
  }

  /** Kernel's reader: every live row of the table, those at the wanted positions kept. */
  private List<String> kernelRows(String path, long version, long[] wanted) {
    List<Long> keep = Arrays.stream(wanted).boxed().collect(Collectors.toList());
    List<String> out = new ArrayList<>();
    tables
        .deletionVectors()
        .scanLiveRows(
            path,
            version,
            NAMES,
            (file, position, values) -> {
              if (keep.contains(position)) {
                out.add(render(position, values));
              }
            });
    return out;
  }

  private static final long[] WANTED =
      LongStream.concat(
              LongStream.of(0, 1, 100, 101, 102, 103, 104, 2998, 2999, 3000, 4500),
              LongStream.range(0, ROWS / 7).map(k -> k * 7 + 3))
          .distinct()
          .sorted()
          .toArray();

  @Test
  void theWantedRowsOfEveryTypeEqualKernelsRowsOfTheSameFile() throws Exception {
    String path = table();
    long v = tables.version(path);
    List<DataFileRows> files = tables.deletionVectors().dataFileRows(path, v);
    assertEquals(1, files.size());
    String file = files.get(0).file();
    Path local = dir.resolve("t").resolve(file);
    try (ParquetFileReader footer = ParquetFileReader.open(new LocalInputFile(local))) {
      assertEquals(25, footer.getRowGroups().size());
    }
    List<String> direct = direct(local, WANTED);
    List<String> kernel = kernelRows(path, v, WANTED);
    assertEquals(436, kernel.size());
    assertEquals(kernel, direct);
    assertEquals(
        "0|Long=0|null|null|Integer=0|null|Float=0.0|null|BigDecimal=-500.00|null"
            + "|BigDecimal=-1234567890123456789.0123456789|LocalDate=1500-01-01"
            + "|LocalDateTime=1969-12-31T23:59:59|null|null|String=row 0 ü€ |null",
        direct.get(0));
    assertEquals(
        "2999|Long=2999|Boolean=false|Short=1499|Integer=9|Long=2099000020993"
            + "|Float=749.75|Double=999.6666666666666|BigDecimal=2528.99|BigDecimal=370246.910204"
            + "|BigDecimal=-1234567890120466786.0123456789|LocalDate=2296-06-19"
            + "|LocalDateTime=1970-01-01T00:06:09.247543|Instant=1960-06-01T00:49:21.974346Z"
            + "|String=név 39|String=row 2999 ü€ xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            + "|byte[]=6232393939",
        direct.get(direct.size() - 1));
    // Rows in the first and the last row group only: the 23 between are skipped unread.
    long[] sparse = {5, 2990, 2999};
    List<String> few = direct(local, sparse);
    assertEquals(
        List.of("5", "2990", "2999"), few.stream().map(ParquetRowsAtTest::position).toList());
    assertEquals(kernelRows(path, v, sparse), few);
  }

  /**
   * Pages of the format's version 2 (levels apart, dictionary ids RLE_DICTIONARY, integers
   * DELTA_BINARY_PACKED, strings DELTA_BYTE_ARRAY) and plain pages without a dictionary: the same
   * rows as Kernel's, for a sparse choice, every row, and runs of adjacent rows.
   */
  @Test
  void pagesOfEitherFormatVersionWithOrWithoutDictionaryGiveKernelsRows() throws Exception {
    long[] every = LongStream.range(0, ROWS).toArray();
    long[] runs = LongStream.range(0, ROWS).filter(i -> i % 500 < 40).toArray();
    Map<Map<String, String>, String> numEncoding =
        Map.of(
            Map.of("parquet.writer.version", "v2"), "RLE_DICTIONARY",
            Map.of("parquet.enable.dictionary", "false"), "PLAIN",
            Map.of("parquet.writer.version", "v2", "parquet.enable.dictionary", "false"),
                "DELTA_BINARY_PACKED");
    for (Map<String, String> conf : numEncoding.keySet()) {
      DeltaTables written = tables(conf);
      String name = "t" + conf.hashCode();
      String path = table(written, name);
      long v = written.version(path);
      Path local =
          dir.resolve(name).resolve(written.deletionVectors().dataFileRows(path, v).get(0).file());
      try (ParquetFileReader footer = ParquetFileReader.open(new LocalInputFile(local))) {
        assertTrue(
            footer.getRowGroups().get(0).getColumns().get(3).getEncodings().stream()
                .anyMatch(e -> e.name().equals(numEncoding.get(conf))),
            conf + ": " + footer.getRowGroups().get(0).getColumns().get(3).getEncodings());
      }
      for (long[] wanted : List.of(WANTED, every, runs)) {
        assertEquals(kernelRows(path, v, wanted), direct(local, wanted), conf.toString());
      }
      assertEquals(ROWS, kernelRows(path, v, every).size());
    }
  }

  @Test
  void aFileOfAnotherLayoutIsLeftToKernelWithNothingVisited() throws Exception {
    String path = table();
    long v = tables.version(path);
    Path local =
        dir.resolve("t").resolve(tables.deletionVectors().dataFileRows(path, v).get(0).file());
    List<String> visited = new ArrayList<>();
    // A column the file does not hold (one added after it was written), and a widened type (the
    // file's INT32 read as a LONG column): Kernel's reader handles both, this one declines.
    for (DeltaColumn column :
        List.of(
            DeltaColumn.nullable("added", OutputType.BIGINT, null),
            DeltaColumn.nullable("num", OutputType.BIGINT, null))) {
      assertFalse(
          ParquetRowsAt.read(
              new Configuration(),
              local.toUri().toString(),
              List.of(DeltaTypes.toField(COLUMNS.get(0)), DeltaTypes.toField(column)),
              new OutputType[] {OutputType.BIGINT, column.type()},
              new long[] {0, 1},
              (position, values) -> visited.add(render(position, values))));
    }
    assertEquals(List.of(), visited);
  }

  private static String position(String rendered) {
    return rendered.substring(0, rendered.indexOf('|'));
  }

  /** The rows {@link ParquetRowsAt} reads at these positions of a local file of the table. */
  private static List<String> direct(Path local, long[] positions) throws Exception {
    List<String> out = new ArrayList<>();
    boolean read =
        ParquetRowsAt.read(
            new Configuration(),
            local.toUri().toString(),
            COLUMNS.stream().map(DeltaTypes::toField).collect(Collectors.toList()),
            COLUMNS.stream().map(DeltaColumn::type).toArray(OutputType[]::new),
            positions,
            (position, values) -> out.add(render(position, values)));
    assertTrue(read);
    return out;
  }

  @Test
  void readingRowsAtPositionsHonoursTheDeletionVectorAndMatchesKernel() {
    String path = table();
    long v = tables.version(path);
    String file = tables.deletionVectors().dataFileRows(path, v).get(0).file();
    long[] deleted = {0, 2, 101, 2999};
    DeletionVectors.VectorFile vector =
        DeletionVectors.file(List.of(DeletionVectors.serialize(deleted)));
    tables
        .deletionVectors()
        .commitDeletionVectors(
            path,
            v,
            vector.bytes(),
            List.of(
                new DeletionVectorUpdate(
                    file,
                    vector.placements().get(0).offset(),
                    vector.placements().get(0).sizeInBytes(),
                    deleted.length)),
            List.of(),
            null,
            0,
            Map.of());
    List<String> rows = new ArrayList<>();
    long visited =
        tables
            .deletionVectors()
            .readLiveRowsAt(
                path,
                v + 1,
                NAMES,
                Map.of(file, WANTED),
                (f, position, values) -> rows.add(render(position, values)));
    assertEquals(433, visited);
    assertEquals(kernelRows(path, v + 1, WANTED), rows);
    assertEquals(
        List.of("1", "3", "10", "17"),
        rows.subList(0, 4).stream().map(ParquetRowsAtTest::position).toList());
    assertFalse(rows.stream().anyMatch(r -> r.startsWith("101|") || r.startsWith("2999|")));
  }
}
