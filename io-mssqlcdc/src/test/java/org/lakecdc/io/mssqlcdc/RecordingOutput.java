package org.lakecdc.io.mssqlcdc;

import java.util.List;
import org.apache.beam.sdk.transforms.DoFn.OutputReceiver;
import org.joda.time.Instant;

/** An {@link OutputReceiver} that appends to a list (for {@code @SplitRestriction}). */
public final class RecordingOutput<T> implements OutputReceiver<T> {
  private final List<T> values;

  /** A receiver appending to {@code values}. */
  public RecordingOutput(List<T> values) {
    this.values = values;
  }

  @Override
  public void output(T output) {
    values.add(output);
  }

  @Override
  public void outputWithTimestamp(T output, Instant timestamp) {
    values.add(output);
  }
}
