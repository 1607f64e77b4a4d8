package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The capture instances a command works on at once ({@code --tables}), shared by {@code
 * CdcToDelta}, {@code ApplyChanges} and {@code Simulator}.
 */
public interface TablesListOptions extends PipelineOptions {
  @Description(
      "Capture instances, comma-separated (dbo_orders,dbo_lineitem), instead of"
          + " --captureInstance. CdcToDelta streams each into its own bronze table"
          + " (--targetTemplate) under its own app id (--appIdTemplate), sharing --factsTable and"
          + " --controlTable, in one pipeline; ApplyChanges applies each one's bronze table"
          + " (--bronzeTemplate) into its silver table (--silverTemplate), in one pipeline;"
          + " Simulator's export exports them, each with the other instance of its table.")
  String getTables();

  void setTables(String value);
}
