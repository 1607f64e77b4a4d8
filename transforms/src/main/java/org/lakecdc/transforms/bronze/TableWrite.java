package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;

/**
 * One table of a change write: its read ({@code MssqlCdcIO.read()} for its capture instance), its
 * target (bronze, the shared facts and control tables, the start position) and its change schema
 * ({@code read.outputSchema()}).
 *
 * @param read the table's read
 * @param target the table's target
 * @param changeSchema the read's output schema
 */
public record TableWrite(MssqlCdcIO.Read read, DeltaTarget target, Schema changeSchema) {
  public TableWrite {
    Objects.requireNonNull(read, "read");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(changeSchema, "changeSchema");
  }

  /** The capture instance the read is configured with: the table's key in the pipeline. */
  public String captureInstance() {
    return Objects.requireNonNull(read.getSourceConfiguration(), "read without a source")
        .getCaptureInstance();
  }

  /** The targets of {@code tables}, by capture instance. */
  static Map<String, DeltaTarget> targets(List<TableWrite> tables) {
    Map<String, DeltaTarget> targets = new LinkedHashMap<>();
    for (TableWrite table : tables) {
      targets.put(table.captureInstance(), table.target());
    }
    return targets;
  }

  /**
   * Reads the tables and writes each batch's rows to its bronze data files in the reading stage,
   * keyed by capture instance. One table reads as {@code read.writeTo(sink)} does (its failures
   * fail the pipeline); several read in one {@code MssqlCdcIO.readAll()}, where a table's failure
   * ends that table with a {@link ChangeBatch#failed} batch (null files) and the others read on.
   */
  static PCollection<KV<String, KV<ChangeBatch, BatchFiles>>> readAndWriteFiles(
      PBegin input, List<TableWrite> tables, boolean isolate) {
    PCollection<KV<ChangeBatch, BatchFiles>> written;
    if (!isolate) {
      TableWrite only = tables.get(0);
      written =
          input.apply(
              "Read and write bronze files",
              only.read().writeTo(BronzeBatchSink.of(only.target(), only.changeSchema())));
    } else {
      written =
          input.apply(
              "Read and write bronze files of " + names(tables),
              readAll(tables).writeTo(sinks(tables)));
    }
    return keyed(written);
  }

  /**
   * {@link #readAndWriteFiles(PBegin, List, boolean)}, each table's read started when an element of
   * {@code started} names its capture instance: one table alone ({@code isolate} false, {@code
   * MssqlCdcIO.Read#writeFrom}: its failures fail the pipeline), or many in one {@code readAll()}
   * ({@code MssqlCdcIO.ReadAll#writeFrom}).
   */
  static PCollection<KV<String, KV<ChangeBatch, BatchFiles>>> readAndWriteFiles(
      PCollection<String> started, List<TableWrite> tables, boolean isolate) {
    if (!isolate) {
      TableWrite only = tables.get(0);
      return keyed(
          started.apply(
              "Read and write bronze files",
              only.read().writeFrom(BronzeBatchSink.of(only.target(), only.changeSchema()))));
    }
    return keyed(
        started.apply(
            "Read and write bronze files of " + names(tables),
            readAll(tables).writeFrom(sinks(tables))));
  }

  private static String names(List<TableWrite> tables) {
    List<String> names = new ArrayList<>();
    tables.forEach(t -> names.add(t.captureInstance()));
    return String.join(",", names);
  }

  private static MssqlCdcIO.ReadAll readAll(List<TableWrite> tables) {
    MssqlCdcIO.ReadAll all = MssqlCdcIO.readAll();
    for (TableWrite table : tables) {
      all = all.with(table.read());
    }
    return all;
  }

  private static Map<String, BronzeBatchSink> sinks(List<TableWrite> tables) {
    Map<String, BronzeBatchSink> sinks = new LinkedHashMap<>();
    for (TableWrite table : tables) {
      sinks.put(table.captureInstance(), BronzeBatchSink.of(table.target(), table.changeSchema()));
    }
    return sinks;
  }

  private static PCollection<KV<String, KV<ChangeBatch, BatchFiles>>> keyed(
      PCollection<KV<ChangeBatch, BatchFiles>> written) {
    return written
        .apply(
            "Key batches by table",
            WithKeys.of(
                    (SerializableFunction<KV<ChangeBatch, BatchFiles>, String>)
                        kv -> kv.getKey().captureInstance())
                .withKeyType(TypeDescriptors.strings()))
        .setCoder(
            KvCoder.of(
                StringUtf8Coder.of(),
                KvCoder.of(ChangeBatch.coder(), NullableCoder.of(BatchFilesCoder.of()))));
  }
}
