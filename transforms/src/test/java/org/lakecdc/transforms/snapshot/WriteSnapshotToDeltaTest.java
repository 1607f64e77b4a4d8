package org.lakecdc.transforms.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;

/** A target's snapshot is committed once, also when two runs race to commit theirs. */
class WriteSnapshotToDeltaTest {
  @TempDir Path dir;

  private static final Schema CHANGE = Schema.builder().addInt32Field("order_id").build();

  @Test
  void theLoserOfTwoConcurrentSnapshotCommitsWritesNothing() {
    DeltaTables tables = DeltaTables.create();
    String bronze = dir.resolve("bronze").toString();
    tables.createIfAbsent(bronze, BronzeTable.definition(CHANGE));
    Schema bronzeSchema = BronzeTable.schema(CHANGE);
    StreamPosition atS =
        new StreamPosition(
            "dbo_orders",
            0,
            -1,
            Lsn.parse("0x0000002A000001000071"),
            Instant.parse("2026-09-28T13:58:00Z"),
            "dbo_orders");
    List<DataFileAction> first = files(tables, bronze, bronzeSchema, 1, 2, 3);
    List<DataFileAction> second = files(tables, bronze, bronzeSchema, 1, 2, 3);

    // Both runs found no snapshot recorded before either committed.
    assertEquals(3, WriteSnapshotToDelta.commitOnce(tables, bronze, atS, first, 3, null));
    assertEquals(-1, WriteSnapshotToDelta.commitOnce(tables, bronze, atS, second, 3, null));

    List<Map<String, Object>> rows = tables.scan(bronze);
    assertEquals(
        List.of(1, 2, 3),
        rows.stream().map(r -> (Integer) r.get("order_id")).sorted().toList(),
        "one snapshot's rows");
    assertEquals(3L, WriteSnapshotToDelta.committedSnapshotRows(tables, bronze).orElseThrow());
    assertEquals(
        java.util.OptionalLong.of(0),
        tables.latestTransactionVersion(bronze, "dbo_orders#snapshot"));
  }

  private static List<DataFileAction> files(
      DeltaTables tables, String bronze, Schema bronzeSchema, int... ids) {
    List<Row> rows = new java.util.ArrayList<>();
    for (int id : ids) {
      rows.add(
          BronzeTable.toBronzeRow(
              bronzeSchema,
              Row.withSchema(CHANGE).addValue(id).build(),
              null,
              "0x0000002A000001000071",
              null));
    }
    return tables.writeDataFiles(bronze, bronzeSchema, rows);
  }
}
