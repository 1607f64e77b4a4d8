package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.delta.kernel.utils.CloseableIterator;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/** A table read one data file at a time, as a seed pipeline's workers read a copy. */
class ScanFilesTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private static final List<DeltaColumn> ORDERS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, null),
          DeltaColumn.nullable("amount", OutputType.decimal(18, 2), null));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(ORDERS);

  private static Row order(long id, String amount) {
    return Row.withSchema(SCHEMA).addValues(id, new BigDecimal(amount)).build();
  }

  private static List<Map<String, Object>> read(DeltaTables tables, ScanFile file)
      throws Exception {
    List<Map<String, Object>> rows = new ArrayList<>();
    try (CloseableIterator<Map<String, Object>> it = tables.readScanFile(file)) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  @Test
  void eachDataFileIsListedFromTheLogAndReadAloneAtItsVersion() throws Exception {
    String path = dir.resolve("copy").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.SILVER, ORDERS));
    tables.append(path, SCHEMA, List.of(order(1, "1.00"), order(2, "2.00")), null, 0, Map.of());
    tables.append(path, SCHEMA, List.of(order(3, "3.00")), null, 0, Map.of());

    List<ScanFile> files = tables.scanFiles(path);
    assertEquals(2, files.size());
    long version = tables.version(path);
    // A later commit does not change what the listed files read: they are read at their version.
    tables.append(path, SCHEMA, List.of(order(4, "4.00")), null, 0, Map.of());

    List<List<Map<String, Object>>> perFile = new ArrayList<>();
    DeltaTables worker = DeltaTables.create();
    for (ScanFile file : files) {
      assertEquals(version, file.version());
      // What a worker receives: a copy through the pipeline's coder, read with its own DeltaTables.
      ScanFile received = CoderUtils.clone(ScanFileCoder.of(), file);
      assertEquals(file, received);
      perFile.add(read(worker, received));
    }
    perFile.sort(Comparator.comparingInt(List::size));
    assertEquals(
        List.of(
            List.of(Map.of("id", 3L, "amount", new BigDecimal("3.00"))),
            List.of(
                Map.of("id", 1L, "amount", new BigDecimal("1.00")),
                Map.of("id", 2L, "amount", new BigDecimal("2.00")))),
        perFile);
  }

  @Test
  void aTableWithoutDataFilesListsNone() {
    String path = dir.resolve("empty").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.SILVER, ORDERS));
    assertEquals(List.of(), tables.scanFiles(path));
    assertThrows(
        IllegalStateException.class, () -> tables.scanFiles(dir.resolve("none").toString()));
  }

  @Test
  void theScanFileCoderKeepsEachFieldExactly() throws Exception {
    ScanFile file = new ScanFile("s3a://lake/copy", 9_000_000_000L, "{\"add\":{\"path\":\"ä b\"}}");
    ScanFile back = CoderUtils.clone(ScanFileCoder.of(), file);
    assertEquals("s3a://lake/copy", back.tablePath());
    assertEquals(9_000_000_000L, back.version());
    assertEquals("{\"add\":{\"path\":\"ä b\"}}", back.json());

    ScanFile empty = new ScanFile("", 0, "");
    ScanFile none = CoderUtils.clone(ScanFileCoder.of(), empty);
    assertEquals("", none.tablePath());
    assertEquals(0, none.version());
    assertEquals("", none.json());
    ScanFileCoder.of().verifyDeterministic();
  }

  @Test
  void theDataFileActionCoderKeepsEachFieldExactlyAnUnknownRowCountIncluded() throws Exception {
    DataFileAction known =
        new DataFileAction("file:/lake/bronze/a-000.parquet", 1234, 2, "{\"add\":{}}");
    DataFileAction back = CoderUtils.clone(DataFileActionCoder.of(), known);
    assertEquals("file:/lake/bronze/a-000.parquet", back.path());
    assertEquals(1234, back.sizeBytes());
    assertEquals(2, back.rowCount());
    assertEquals("{\"add\":{}}", back.actionJson());

    DataFileAction unknown = new DataFileAction("", 0, -1, "");
    DataFileAction none = CoderUtils.clone(DataFileActionCoder.of(), unknown);
    assertEquals("", none.path());
    assertEquals(0, none.sizeBytes());
    assertEquals(-1, none.rowCount());
    assertEquals("", none.actionJson());
  }
}
