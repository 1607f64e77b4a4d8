package org.lakecdc.cdc.transforms.delta;

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
import org.apache.beam.sdk.util.SerializableUtils;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.mssqlcdc.schema.OutputType;

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

  private static List<Map<String, Object>> read(DeltaTables tables, DeltaTables.ScanFile file)
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

    List<DeltaTables.ScanFile> files = tables.scanFiles(path);
    assertEquals(2, files.size());
    long version = tables.version(path);
    // A later commit does not change what the listed files read: they are read at their version.
    tables.append(path, SCHEMA, List.of(order(4, "4.00")), null, 0, Map.of());

    List<List<Map<String, Object>>> perFile = new ArrayList<>();
    DeltaTables worker = DeltaTables.create();
    for (DeltaTables.ScanFile file : files) {
      assertEquals(version, file.version());
      // What a worker receives: a serialized copy, read with its own DeltaTables.
      perFile.add(read(worker, SerializableUtils.clone(file)));
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
}
