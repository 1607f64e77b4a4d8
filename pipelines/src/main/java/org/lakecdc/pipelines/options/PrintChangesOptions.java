package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/** Options of {@code PrintChanges}. Beam's {@code --camelCase=value} form. */
public interface PrintChangesOptions
    extends OutputOptions, DemoOptions, CaptureInstanceOptions, BatchReadOptions {
  @Description("How many change rows to print (the first ones in change order).")
  @Default.Integer(10)
  @Accepts("0 or a positive integer")
  int getSampleRows();

  void setSampleRows(int value);
}
