package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/**
 * The physical limit: parquet-java (parquet-hadoop's {@link ParquetWriter}, Snappy, its default row
 * group and page sizes) writes the rows the job writes to bronze, directly to one local file: the
 * five change columns ({@code _start_lsn}, {@code _seqval}, {@code _operation}, {@code
 * _command_id}, {@code _commit_ts}, with values of the shape the simulator gives, one LSN per
 * transaction) and the nine orders columns, typed as bronze types them.
 */
final class ParquetAnchor {
  /** The file's schema: bronze's columns of {@code dbo.orders}. */
  static final MessageType SCHEMA =
      MessageTypeParser.parseMessageType(
          "message bronze {\n"
              + "  required binary _start_lsn (STRING);\n"
              + "  optional binary _seqval (STRING);\n"
              + "  required int32 _operation;\n"
              + "  optional int32 _command_id;\n"
              + "  required int64 _commit_ts (TIMESTAMP(MICROS,false));\n"
              + "  optional int32 o_orderkey;\n"
              + "  optional int32 o_custkey;\n"
              + "  optional binary o_orderstatus (STRING);\n"
              + "  optional int64 o_totalprice (DECIMAL(15,2));\n"
              + "  optional int32 o_orderdate (DATE);\n"
              + "  optional binary o_orderpriority (STRING);\n"
              + "  optional binary o_clerk (STRING);\n"
              + "  optional int32 o_shippriority;\n"
              + "  optional binary o_comment (STRING);\n"
              + "}");

  private ParquetAnchor() {}

  /**
   * parquet-java in a fresh JVM, as the job runs: makes the first {@code rows} orders in memory
   * (not timed), writes them once with {@link #write} and writes the seconds the write took to the
   * result file ({@code seconds=<s>}).
   *
   * <p>Usage: {@code ParquetAnchor <Parquet file> <rows> <rows per transaction> <result file>}.
   *
   * @param args the four arguments
   * @throws IllegalArgumentException for another number of arguments
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 4) {
      throw new IllegalArgumentException(
          "usage: ParquetAnchor <Parquet file> <rows> <rows per transaction> <result file>");
    }
    List<Order> orders = new java.util.ArrayList<>();
    for (java.util.Iterator<Order> it = Orders.first(Long.parseLong(args[1])); it.hasNext(); ) {
      orders.add(it.next());
    }
    double seconds = write(orders, Integer.parseInt(args[2]), Path.of(args[0]));
    Files.writeString(Path.of(args[3]), "seconds=" + seconds + "\n");
  }

  /**
   * Writes {@code orders} to {@code file} (replaced) and returns the seconds the write took (from
   * opening the writer to closing it; the rows are already in memory).
   *
   * @param orders the rows, in insert order
   * @param rowsPerTransaction rows per LSN, as in the simulator's database (0: one)
   * @param file the Parquet file to write
   * @return the elapsed seconds
   * @throws UncheckedIOException when the file cannot be written
   */
  static double write(List<Order> orders, int rowsPerTransaction, Path file) {
    try {
      Files.createDirectories(file.getParent());
      Files.deleteIfExists(file);
      long start = System.nanoTime();
      try (ParquetWriter<Order> writer =
          new Builder(new LocalOutputFile(file), rowsPerTransaction)
              .withCompressionCodec(CompressionCodecName.SNAPPY)
              .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
              .build()) {
        for (Order o : orders) {
          writer.write(o);
        }
      }
      return (System.nanoTime() - start) / 1e9;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + file, e);
    }
  }

  private static final class Builder extends ParquetWriter.Builder<Order, Builder> {
    private final int rowsPerTransaction;

    Builder(LocalOutputFile file, int rowsPerTransaction) {
      super(file);
      this.rowsPerTransaction = rowsPerTransaction;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<Order> getWriteSupport(Configuration conf) {
      return new OrderWriteSupport(rowsPerTransaction);
    }
  }

  /** Writes an order as a bronze insert row, numbering rows and transactions as it goes. */
  private static final class OrderWriteSupport extends WriteSupport<Order> {
    private static final long START_MICROS = SourceDatabase.START.toEpochMilli() * 1000;
    private final int rowsPerTransaction;
    private RecordConsumer out;
    private long row;

    OrderWriteSupport(int rowsPerTransaction) {
      this.rowsPerTransaction = rowsPerTransaction;
    }

    @Override
    public WriteContext init(Configuration configuration) {
      return new WriteContext(SCHEMA, new HashMap<>());
    }

    @Override
    public void prepareForWrite(RecordConsumer recordConsumer) {
      out = recordConsumer;
    }

    @Override
    public void write(Order o) {
      long transaction = rowsPerTransaction == 0 ? 0 : row / rowsPerTransaction;
      long inTransaction = rowsPerTransaction == 0 ? row : row % rowsPerTransaction;
      row++;
      out.startMessage();
      binary(0, "_start_lsn", lsn(0x2A000001000001L + transaction * 0x10));
      binary(1, "_seqval", lsn(0x2A000001000001L + transaction * 0x10 + inTransaction + 1));
      int32(2, "_operation", 2);
      int32(3, "_command_id", (int) inTransaction + 1);
      out.startField("_commit_ts", 4);
      out.addLong(START_MICROS + transaction * 1_000_000L);
      out.endField("_commit_ts", 4);
      int32(5, "o_orderkey", (int) o.getOrderKey());
      int32(6, "o_custkey", (int) o.getCustomerKey());
      binary(7, "o_orderstatus", String.valueOf(o.getOrderStatus()));
      out.startField("o_totalprice", 8);
      out.addLong(o.getTotalPriceInCents());
      out.endField("o_totalprice", 8);
      int32(9, "o_orderdate", o.getOrderDate());
      binary(10, "o_orderpriority", o.getOrderPriority());
      binary(11, "o_clerk", o.getClerk());
      int32(12, "o_shippriority", o.getShipPriority());
      binary(13, "o_comment", o.getComment());
      out.endMessage();
    }

    private void int32(int index, String name, int value) {
      out.startField(name, index);
      out.addInteger(value);
      out.endField(name, index);
    }

    private void binary(int index, String name, String value) {
      out.startField(name, index);
      out.addBinary(Binary.fromString(value));
      out.endField(name, index);
    }

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** {@code 0x} and 20 upper-case hex digits, as bronze's LSN text. */
    private static String lsn(long value) {
      char[] text = new char[22];
      text[0] = '0';
      text[1] = 'x';
      for (int i = 21; i >= 2; i--) {
        text[i] = HEX[(int) (value & 0xF)];
        value >>>= 4;
      }
      return new String(text);
    }
  }
}
