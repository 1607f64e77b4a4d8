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
      MssqlCdcIO.ReadAll all = MssqlCdcIO.readAll();
      Map<String, BronzeBatchSink> sinks = new LinkedHashMap<>();
      List<String> names = new ArrayList<>();
      for (TableWrite table : tables) {
        all = all.with(table.read());
        sinks.put(
            table.captureInstance(), BronzeBatchSink.of(table.target(), table.changeSchema()));
        names.add(table.captureInstance());
      }
      written =
          input.apply(
              "Read and write bronze files of " + String.join(",", names), all.writeTo(sinks));
    }
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
