package org.lakecdc.io.mssqlcdc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.DoFn.MultiOutputReceiver;
import org.apache.beam.sdk.transforms.DoFn.OutputReceiver;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TupleTag;
import org.joda.time.Instant;

/** A {@link MultiOutputReceiver} that records what a DoFn emits, per tag, with timestamps. */
public final class RecordingReceiver implements MultiOutputReceiver {
  private final Map<TupleTag<?>, List<TimestampedValue<?>>> outputs = new HashMap<>();
  private Runnable beforeFirst;

  /** A receiver that only records. */
  public RecordingReceiver() {
    this(() -> {});
  }

  /** A receiver that runs {@code beforeFirst} when the first value of any tag is emitted. */
  public RecordingReceiver(Runnable beforeFirst) {
    this.beforeFirst = beforeFirst;
  }

  @Override
  public <T> OutputReceiver<T> get(TupleTag<T> tag) {
    List<TimestampedValue<?>> values = outputs.computeIfAbsent(tag, t -> new ArrayList<>());
    return new OutputReceiver<T>() {
      @Override
      public void output(T output) {
        throw new AssertionError("the reader must timestamp every output");
      }

      @Override
      public void outputWithTimestamp(T output, Instant timestamp) {
        Runnable first = beforeFirst;
        beforeFirst = () -> {};
        first.run();
        values.add(TimestampedValue.of(output, timestamp));
      }
    };
  }

  @Override
  public <T> OutputReceiver<Row> getRowReceiver(TupleTag<T> tag) {
    throw new UnsupportedOperationException("the reader emits rows through get()");
  }

  /** The values emitted under {@code tag}, in order. */
  @SuppressWarnings("unchecked")
  public <T> List<T> values(TupleTag<T> tag) {
    return outputs.getOrDefault(tag, List.of()).stream().map(v -> (T) v.getValue()).toList();
  }

  /** The timestamps of the values emitted under {@code tag}, in order. */
  public List<Instant> timestamps(TupleTag<?> tag) {
    return outputs.getOrDefault(tag, List.of()).stream()
        .map(TimestampedValue::getTimestamp)
        .toList();
  }
}
