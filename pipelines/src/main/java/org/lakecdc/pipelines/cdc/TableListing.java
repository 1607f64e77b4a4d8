package org.lakecdc.pipelines.cdc;

import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * The tables a continuous run of many tables is asked to follow, read again while it runs: the
 * lines of its {@code --tablesFile}, each turned into a table's configuration as at the start, or
 * refused alone. {@link ContinuousRunner} reads it every poll interval (the streaming form) or
 * before each bounded run (the repeated form), starts the tables added and stops the tables
 * removed.
 */
public interface TableListing {
  /** Where the tables are listed, for printed lines: {@code --tablesFile tables.options}. */
  String name();

  /**
   * The tables listed now, in the listing's order.
   *
   * @throws IllegalArgumentException when the listing as a whole cannot be read (the file is
   *     missing or unreadable, it lists no table): one line naming it and why
   */
  List<Listed> read();

  /**
   * One listed table, or one refused line.
   *
   * @param captureInstance the capture instance the line starts with, or null when the line could
   *     not be parsed
   * @param origin where it is listed: {@code --tablesFile tables.options line 3}
   * @param args the table's own options, names canonical, as listed ({@code
   *     --maxCommitsPerBatch=5})
   * @param config the table's configuration, or null when refused
   * @param refusal one line naming the origin and what is wrong, or null
   */
  record Listed(
      @Nullable String captureInstance,
      String origin,
      List<String> args,
      @Nullable JobConfig config,
      @Nullable String refusal) {}
}
