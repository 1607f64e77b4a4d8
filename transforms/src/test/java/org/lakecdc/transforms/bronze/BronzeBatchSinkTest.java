package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;

/** The bronze sink writing a batch of several chunks through its writer thread. */
class BronzeBatchSinkTest {
  @TempDir Path dir;

  private static final Schema CHANGE =
      DeltaColumn.toBeamSchema(
          List.of(
              DeltaColumn.required(MetadataColumns.CAPTURE_INSTANCE, OutputType.STRING, null),
              DeltaColumn.required(MetadataColumns.START_LSN, OutputType.STRING, null),
              DeltaColumn.nullable(MetadataColumns.SEQVAL, OutputType.STRING, null),
              DeltaColumn.required(MetadataColumns.OPERATION, OutputType.INT, null),
              DeltaColumn.nullable(MetadataColumns.COMMAND_ID, OutputType.INT, null),
              DeltaColumn.required(MetadataColumns.COMMIT_TS, OutputType.TIMESTAMP_NTZ, null),
              DeltaColumn.nullable("order_id", OutputType.INT, null),
              DeltaColumn.nullable("note", OutputType.STRING, null)));

  private static final LocalDateTime T0 = LocalDateTime.of(2026, 12, 1, 10, 0);

  /** Change row {@code i}: an insert, or a delete for every seventh, ten rows a transaction. */
  private static Row change(int i) {
    return Row.withSchema(CHANGE)
        .addValues(
            "dbo_orders",
            String.format("0x%020X", 0x2A00000100L + i / 10 * 16),
            String.format("0x%020X", 0x2A00000100L + i / 10 * 16 + i % 10 + 1),
            i % 7 == 0 ? MetadataColumns.OP_DELETE : MetadataColumns.OP_INSERT,
            i % 10 + 1,
            T0.plusSeconds(i / 10),
            i,
            i % 3 == 0 ? null : "note " + i)
        .build();
  }

  @Test
  void aBatchOfThreeChunksIsWrittenWholeWithItsBronzeColumns() {
    String bronze = dir.resolve("bronze").toString();
    DeltaTables tables = HadoopConf.empty().tables();
    tables.createIfAbsent(bronze, BronzeTable.definition(CHANGE));
    DeltaTarget target =
        new DeltaTarget(
            bronze,
            dir.resolve("facts").toString(),
            dir.resolve("control").toString(),
            new StreamPosition("app", 0, 4, Lsn.ZERO, null, "dbo_orders"),
            Granularity.HOUR,
            Instant.parse("2026-12-01T11:00:00Z"),
            null,
            HadoopConf.empty(),
            null);
    List<Row> changes = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      changes.add(change(i));
    }
    BronzeBatchSink sink = BronzeBatchSink.of(target, CHANGE);
    sink.setup();

    BatchFiles files = sink.write(0, changes.iterator());
    tables.commit(bronze, files.files(), "app", files.batchId(), Map.of());

    assertEquals(5L, files.batchId());
    assertEquals(3000L, files.stats().rows());
    assertEquals(429L, files.stats().deletes());
    assertEquals(2571L, files.stats().inserts());
    assertEquals("0x00000000002A00000100", files.stats().minLsn());
    assertEquals("0x00000000002A000013B0", files.stats().maxLsn());
    assertEquals(3000L, files.files().stream().mapToLong(f -> f.rowCount()).sum());
    Schema bronzeSchema = BronzeTable.schema(CHANGE);
    List<Row> written = new ArrayList<>(tables.scan(bronze, bronzeSchema));
    written.sort(Comparator.comparing((Row r) -> r.getInt32("order_id")));
    assertEquals(3000, written.size());
    for (int i = 0; i < 3000; i++) {
      assertEquals(BronzeTable.toBronzeRow(bronzeSchema, change(i), 5, null, null), written.get(i));
    }
    Row last = written.get(2999);
    assertEquals("0x00000000002A000013B0", last.getString(MetadataColumns.START_LSN));
    assertEquals(5, last.getInt32(MetadataColumns.BATCH_ID));
    assertEquals("note 2999", last.getString("note"));
  }
}
