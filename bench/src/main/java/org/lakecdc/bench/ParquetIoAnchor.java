package org.lakecdc.bench;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.extensions.avro.coders.AvroCoder;
import org.apache.beam.sdk.io.FileIO;
import org.apache.beam.sdk.io.parquet.ParquetIO;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;

/**
 * The anchor a Beam user without lakecdc would write: the same change rows, read from the same
 * simulator database by {@link MssqlCdcIO#read()} (in batches of {@value #BATCH_COMMITS} commits:
 * the DirectRunner holds a bundle's output in memory, so one batch of every row would hold them
 * all, as it did at 1,000,000 rows until the kernel stopped the JVM), each turned into an Avro
 * record of bronze's columns and types ({@link #SCHEMA}) and written by Beam's own Parquet writer
 * ({@code FileIO.write().via(ParquetIO.sink(…))}, Snappy, the runner's sharding: no shuffle of the
 * rows) on the DirectRunner, with the job's DirectRunner settings (enforcement checks off, a pool
 * of one less than the processors). No Delta log, no exactly once: files in a directory.
 *
 * <p>Run in a child JVM on the job's class path: {@code ParquetIoAnchor <result file> <database
 * directory> <output directory>}. The result file gets {@code elapsed_ms} (from this main's start
 * to the pipeline's end: pipeline construction, the read, the writes and the finalisation of the
 * files; JVM start-up not counted) and {@code rows} (the rows in the written files, from their
 * Parquet footers).
 */
public final class ParquetIoAnchor {
  /** Bronze's columns of {@code dbo.orders} as Avro types them (the change columns first). */
  static final Schema SCHEMA =
      SchemaBuilder.record("bronze")
          .namespace("org.lakecdc.bench")
          .fields()
          .requiredString("_start_lsn")
          .optionalString("_seqval")
          .requiredInt("_operation")
          .optionalInt("_command_id")
          .name("_commit_ts")
          .type(LogicalTypes.timestampMicros().addToSchema(Schema.create(Schema.Type.LONG)))
          .noDefault()
          .optionalInt("o_orderkey")
          .optionalInt("o_custkey")
          .optionalString("o_orderstatus")
          .name("o_totalprice")
          .type(nullable(LogicalTypes.decimal(15, 2).addToSchema(Schema.create(Schema.Type.BYTES))))
          .withDefault(null)
          .name("o_orderdate")
          .type(nullable(LogicalTypes.date().addToSchema(Schema.create(Schema.Type.INT))))
          .withDefault(null)
          .optionalString("o_orderpriority")
          .optionalString("o_clerk")
          .optionalInt("o_shippriority")
          .optionalString("o_comment")
          .endRecord();

  /** Commits per batch of the anchor's read (the job reads one batch: it writes as it reads). */
  static final int BATCH_COMMITS = 10;

  private ParquetIoAnchor() {}

  private static Schema nullable(Schema type) {
    return Schema.createUnion(List.of(Schema.create(Schema.Type.NULL), type));
  }

  /**
   * Runs the pipeline and writes what it measured.
   *
   * @param args the result file, the simulator's directory, the output directory
   * @throws IOException when the result cannot be written or the files cannot be counted
   */
  public static void main(String[] args) throws IOException {
    long start = System.nanoTime();
    Path result = Path.of(args[0]);
    Path db = Path.of(args[1]);
    Path out = Path.of(args[2]);
    DirectOptions options = PipelineOptionsFactory.create().as(DirectOptions.class);
    options.setRunner(DirectRunner.class);
    options.setEnforceImmutability(false);
    options.setEnforceEncodability(false);
    options.setTargetParallelism(Math.max(1, Runtime.getRuntime().availableProcessors() - 1));
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply(
            "Read",
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(Orders.CAPTURE_INSTANCE)
                        .withClientFactory(FakeCdcClientFactory.of(db)))
                // Batches of 10 commits (10,000 rows here): the DirectRunner holds a bundle's
                // output in memory until the bundle ends, and a bundle ends at a batch boundary
                // at the earliest, so one batch of every row would hold them all.
                .withMaxCommitsPerBatch(BATCH_COMMITS))
        .apply("ToAvro", ParDo.of(new ToRecord()))
        .setCoder(AvroCoder.of(GenericRecord.class, SCHEMA))
        .apply(
            "ParquetIO",
            FileIO.<GenericRecord>write()
                .via(ParquetIO.sink(SCHEMA).withCompressionCodec(CompressionCodecName.SNAPPY))
                .to(out.toString())
                .withSuffix(".parquet"));
    pipeline.run().waitUntilFinish();
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    Files.writeString(
        result, "elapsed_ms=" + elapsedMs + "\nrows=" + rows(out) + "\n", StandardCharsets.UTF_8);
  }

  /** The rows of the Parquet files in a directory, from their footers. */
  static long rows(Path dir) throws IOException {
    long rows = 0;
    Configuration conf = new Configuration(false);
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f :
          (Iterable<Path>) files.filter(p -> p.toString().endsWith(".parquet"))::iterator) {
        try (ParquetFileReader reader =
            ParquetFileReader.open(
                HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(f.toUri()), conf))) {
          for (BlockMetaData block : reader.getFooter().getBlocks()) {
            rows += block.getRowCount();
          }
        }
      }
    }
    return rows;
  }

  /** A change row as an Avro record of {@link #SCHEMA}. */
  static final class ToRecord extends DoFn<Row, GenericRecord> {
    @ProcessElement
    public void process(@Element Row row, OutputReceiver<GenericRecord> out) {
      out.output(record(row));
    }
  }

  /** {@link ToRecord}'s conversion: the row's fields of the same names, bronze's encodings. */
  static GenericRecord record(Row row) {
    GenericData.Record r = new GenericData.Record(SCHEMA);
    r.put("_start_lsn", row.getString("_start_lsn"));
    r.put("_seqval", row.getString("_seqval"));
    r.put("_operation", row.getInt32("_operation"));
    r.put(
        "_command_id",
        row.getSchema().hasField("_command_id") ? row.getInt32("_command_id") : null);
    LocalDateTime commit = row.getLogicalTypeValue("_commit_ts", LocalDateTime.class);
    java.time.Instant at = commit.toInstant(ZoneOffset.UTC);
    r.put("_commit_ts", at.getEpochSecond() * 1_000_000L + at.getNano() / 1000);
    r.put("o_orderkey", row.getInt32("o_orderkey"));
    r.put("o_custkey", row.getInt32("o_custkey"));
    r.put("o_orderstatus", row.getString("o_orderstatus"));
    BigDecimal price = row.getDecimal("o_totalprice");
    r.put(
        "o_totalprice",
        price == null ? null : ByteBuffer.wrap(price.unscaledValue().toByteArray()));
    LocalDate date = row.getLogicalTypeValue("o_orderdate", LocalDate.class);
    r.put("o_orderdate", date == null ? null : (int) date.toEpochDay());
    r.put("o_orderpriority", row.getString("o_orderpriority"));
    r.put("o_clerk", row.getString("o_clerk"));
    r.put("o_shippriority", row.getInt32("o_shippriority"));
    r.put("o_comment", row.getString("o_comment"));
    return r;
  }
}
