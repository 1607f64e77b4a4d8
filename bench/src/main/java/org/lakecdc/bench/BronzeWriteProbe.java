package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.bronze.BatchFiles;
import org.lakecdc.transforms.bronze.BronzeBatchSink;
import org.lakecdc.transforms.bronze.DeltaTarget;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The bronze write path alone ({@code bronze_write_rows_per_s}): the change rows of the N orders,
 * made in memory first as the read gives them to the sink (Beam rows of the read's change schema:
 * the six metadata columns and the nine orders columns, one LSN per transaction as in {@link
 * ParquetAnchor}), written by the job's own bronze sink ({@link BronzeBatchSink#write}: bronze
 * rows, Parquet data files in a new bronze table's directory, their statistics read back), in the
 * harness's JVM, as parquet-java writes the same rows for {@code parquet_rows_per_s}. The clock
 * covers the sink's write; the files are then committed and the table must hold exactly N rows
 * (Parquet footers, Delta Kernel's public API), or the measurement fails.
 */
final class BronzeWriteProbe {
  private BronzeWriteProbe() {}

  /**
   * The change schema the job reads {@code db}'s {@code dbo.orders} with ({@code
   * MssqlCdcIO.read()}'s output schema).
   */
  static Schema changeSchema(Path db) {
    return MssqlCdcIO.read()
        .withSourceConfiguration(
            SourceConfiguration.create(Orders.CAPTURE_INSTANCE)
                .withClientFactory(FakeCdcClientFactory.of(db)))
        .outputSchema();
  }

  /**
   * The change rows of {@code orders}: inserts, {@code rowsPerTransaction} a transaction (0: all in
   * one), values of the read's Java types.
   */
  static List<Row> changeRows(Schema schema, List<Order> orders, int rowsPerTransaction) {
    LocalDateTime start = LocalDateTime.ofInstant(SourceDatabase.START, ZoneOffset.UTC);
    boolean commandId = schema.hasField("_command_id");
    List<Row> rows = new ArrayList<>(orders.size());
    long row = 0;
    for (Order o : orders) {
      long transaction = rowsPerTransaction == 0 ? 0 : row / rowsPerTransaction;
      long inTransaction = rowsPerTransaction == 0 ? row : row % rowsPerTransaction;
      row++;
      long lsn = 0x2A000001000001L + transaction * 0x10;
      List<Object> values = new ArrayList<>(schema.getFieldCount());
      values.add(Orders.CAPTURE_INSTANCE);
      values.add(lsn(lsn));
      values.add(lsn(lsn + inTransaction + 1));
      values.add(2);
      if (commandId) {
        values.add((int) inTransaction + 1);
      }
      values.add(start.plusSeconds(transaction));
      values.add((int) o.getOrderKey());
      values.add((int) o.getCustomerKey());
      values.add(String.valueOf(o.getOrderStatus()));
      values.add(BigDecimal.valueOf(o.getTotalPriceInCents(), 2));
      values.add(LocalDate.ofEpochDay(o.getOrderDate()));
      values.add(o.getOrderPriority());
      values.add(o.getClerk());
      values.add(o.getShipPriority());
      values.add(o.getComment());
      rows.add(Row.withSchema(schema).addValues(values).build());
    }
    return rows;
  }

  private static String lsn(long value) {
    return Lsn.ofBytes(java.nio.ByteBuffer.allocate(Lsn.BYTES).putLong(2, value).array())
        .toString();
  }

  /**
   * Writes {@code rows} into a new bronze table under {@code dir} (replaced) with the bronze sink,
   * commits the files and checks the table holds every row.
   *
   * @return the seconds the sink's write took
   * @throws IllegalStateException when the table does not hold exactly {@code rows.size()} rows
   */
  static double write(Schema changeSchema, List<Row> rows, Path dir) {
    SourceDatabase.delete(dir);
    String bronze = dir.resolve("bronze").toAbsolutePath().toString();
    DeltaTables tables = HadoopConf.empty().tables();
    tables.createIfAbsent(
        bronze, org.lakecdc.transforms.bronze.BronzeTable.definition(changeSchema));
    DeltaTarget target =
        new DeltaTarget(
            bronze,
            dir.resolve("facts").toAbsolutePath().toString(),
            dir.resolve("control").toAbsolutePath().toString(),
            new StreamPosition("bench", 0, -1, Lsn.ZERO, null, Orders.CAPTURE_INSTANCE),
            Granularity.HOUR,
            Instant.now(),
            null,
            HadoopConf.empty(),
            null);
    BronzeBatchSink sink = BronzeBatchSink.of(target, changeSchema);
    sink.setup();
    long started = System.nanoTime();
    BatchFiles files = sink.write(0, rows.iterator());
    double seconds = (System.nanoTime() - started) / 1e9;
    tables.commit(bronze, files.files(), "bench", files.batchId(), Map.of());
    long held = new BronzeTable(Path.of(bronze)).rows();
    if (held != rows.size()) {
      throw new IllegalStateException(
          "The bronze sink's table "
              + bronze
              + " holds "
              + held
              + " rows, not the "
              + rows.size()
              + " written");
    }
    return seconds;
  }
}
