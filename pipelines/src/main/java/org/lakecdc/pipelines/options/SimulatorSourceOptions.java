package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Where a command finds the file-backed SQL Server CDC simulator ({@code --fakePath}), shared by
 * every command that reads one or writes one: {@code CdcToDelta}, {@code Backfill}, {@code
 * PrintChanges}, {@code ApplyChanges}, {@code Reconcile}, {@code Status} and {@code Simulator}. No
 * default here: each command applies {@code lakecdc-demo/source} itself, so that it can tell a
 * given path from none.
 */
public interface SimulatorSourceOptions extends PipelineOptions {
  @Description(
      "Directory of the file-backed SQL Server CDC simulator (docs/fake-format.md). Default:"
          + " lakecdc-demo/source. CdcToDelta, Backfill and PrintChanges read it (the demo"
          + " database is built in the default directory when absent; any other directory must"
          + " hold a simulator database unless --buildDemo is given); ApplyChanges and Reconcile"
          + " take each table's capture instances and key columns from it; Status measures the lag"
          + " against its newest commit (when it holds a database); Simulator's verbs write it."
          + " Not with --connectionUrl.")
  String getFakePath();

  void setFakePath(String value);
}
