package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tables delta-spark-check reads are what {@link SampleTables} documents, as Kernel reads them
 * back (the independent delta-spark read is in that module).
 */
class SampleTablesTest {
  @TempDir Path dir;

  @Test
  void sampleTablesHoldTheirDocumentedContent() {
    SampleTables.write(dir);
    DeltaTables tables = DeltaTables.create();

    String types = dir.resolve("types").toString();
    assertEquals(SampleTables.TYPES, tables.describe(types).columns());
    assertEquals(
        List.of(1, 2, 3),
        tables.scan(types).stream()
            .map(r -> (Integer) r.get("c_int"))
            .sorted()
            .collect(Collectors.toList()));
    assertEquals(OptionalLong.of(2), tables.latestTransactionVersion(types, "sample"));
    assertEquals(
        "{\"end_lsn\":\"0x0000002A000001000021\"}",
        tables.domainMetadata(types, "lakecdc.position").orElseThrow());

    List<Map<String, Object>> control = tables.scan(dir.resolve("control").toString());
    assertEquals(List.of(Map.of("id", 3L, "note", "third")), control);

    TableInfo migrated = tables.describe(dir.resolve("migrated").toString());
    assertEquals("silver", migrated.kind().orElseThrow());
    assertEquals(
        List.of(
            DeltaColumn.nullable("a", org.lakecdc.io.mssqlcdc.schema.OutputType.STRING, "column a"),
            DeltaColumn.nullable("b", org.lakecdc.io.mssqlcdc.schema.OutputType.INT, "added b")),
        migrated.columns());

    assertEquals(13, tables.version(dir.resolve("checkpointed").toString()));
  }
}
