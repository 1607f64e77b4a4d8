package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Show}, in Beam's {@code --camelCase=value} form. docs/status.md is the
 * reference.
 */
public interface ShowOptions extends TableReadOptions {
  @Description(
      "Path or URI of the Delta table to print: a bronze, facts or control table, or any other"
          + " Delta table.")
  String getTable();

  void setTable(String value);

  @Description(
      "How many rows to print: the first ones by the bronze order key for a bronze table, by"
          + " written_at, app_id, batch_id for a facts table, else the first ones in stored order.")
  @Default.Integer(20)
  @Accepts("a positive integer")
  int getLimit();

  void setLimit(int value);

  @Description(
      "With a history table: print the rows current at this instant (ISO-8601 with a zone offset,"
          + " e.g. 2026-11-01T08:30:00Z): the versions with _valid_from_ts <= it < _valid_to_ts (or"
          + " still current), one per key that existed then.")
  @Accepts("an ISO-8601 instant such as 2026-11-01T08:30:00Z")
  String getAsOf();

  void setAsOf(String value);
}
