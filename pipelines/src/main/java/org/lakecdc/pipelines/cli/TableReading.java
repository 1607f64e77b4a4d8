package org.lakecdc.pipelines.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HexFormat;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.options.TableReadOptions;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.TablePaths;

/**
 * What {@code Status} and {@code Show} share: the Delta tables of their Hadoop options, table paths
 * checked as options, and values rendered for people (text) and machines (JSON).
 */
public final class TableReading {
  private TableReading() {}

  /**
   * Delta tables on {@code --hadoopConfFile}'s properties with {@code --hadoopConf}'s entries set
   * over them.
   *
   * @throws IllegalArgumentException naming the option: a malformed entry, a missing or unparsable
   *     file
   */
  public static DeltaTables tables(TableReadOptions o) {
    return conf(o).tables();
  }

  /**
   * {@code --hadoopConfFile}'s properties with {@code --hadoopConf}'s entries set over them.
   *
   * @throws IllegalArgumentException as {@link #tables}
   */
  public static HadoopConf conf(TableReadOptions o) {
    HadoopConf conf = HadoopConf.empty();
    if (o.getHadoopConfFile() != null) {
      conf = HadoopConf.readFile("hadoopConfFile", o.getHadoopConfFile());
    }
    if (o.getHadoopConf() != null) {
      conf = conf.overriddenBy(HadoopConf.parseEntries("hadoopConf", o.getHadoopConf()));
    }
    return conf;
  }

  /**
   * The normalized path of the Delta table an option names ({@link TablePaths#normalize}).
   *
   * @throws IllegalArgumentException naming the option when the value is empty or not a path
   */
  public static String tablePath(String option, @Nullable String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(
          "--" + option + " must be the path or URI of a Delta table, not empty");
    }
    try {
      return TablePaths.normalize(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + option + ": " + e.getMessage());
    }
  }

  /**
   * The table an option names, which must exist.
   *
   * @throws IllegalArgumentException {@code --<option> <path> holds no Delta table (...)} naming
   *     the option and the path
   */
  public static String existingTable(DeltaTables tables, String option, @Nullable String value) {
    String path = tablePath(option, value);
    if (!tables.exists(path)) {
      throw new IllegalArgumentException(
          "--"
              + option
              + " "
              + path
              + " holds no Delta table (no _delta_log with a commit): give the path or URI of a"
              + " table the job wrote");
    }
    return path;
  }

  /** Whether a local directory holds a simulator database (its {@code server.json}). */
  public static boolean isSimulator(Path directory) {
    return Files.isRegularFile(directory.resolve("server.json"));
  }

  /** An instant in ISO-8601 UTC ({@code 2026-09-28T15:55:00Z}); {@code NULL} for null. */
  public static String text(@Nullable Instant instant) {
    return instant == null ? "NULL" : instant.toString();
  }

  /** A TIMESTAMP_NTZ value (UTC in every table this project writes) as an instant. */
  public static @Nullable Instant utc(@Nullable Object value) {
    if (value instanceof LocalDateTime time) {
      return time.toInstant(ZoneOffset.UTC);
    }
    if (value instanceof Instant instant) {
      return instant;
    }
    return null;
  }

  /**
   * A value as {@link DeltaTables#scan(String)} reads it, for people: {@code NULL}; timestamps in
   * ISO-8601 UTC ({@code 2026-09-28T13:50:00Z}; TIMESTAMP_NTZ read as UTC); decimals in plain
   * notation; binary as {@code 0x} and upper-case hex; anything else as its text.
   */
  public static String text(@Nullable Object value) {
    if (value == null) {
      return "NULL";
    }
    if (value instanceof LocalDateTime || value instanceof Instant) {
      return utc(value).toString();
    }
    if (value instanceof BigDecimal decimal) {
      return decimal.toPlainString();
    }
    if (value instanceof byte[] bytes) {
      return "0x" + HexFormat.of().withUpperCase().formatHex(bytes);
    }
    if (value instanceof LocalDate date) {
      return date.toString();
    }
    return String.valueOf(value);
  }

  /**
   * Sets {@code field} of {@code node} to a value as {@link DeltaTables#scan(String)} reads it:
   * JSON null; numbers and booleans as JSON numbers and booleans (decimals exactly); timestamps,
   * dates and binary as the text {@link #text(Object)} gives; text as text.
   */
  public static void put(ObjectNode node, String field, @Nullable Object value) {
    if (value == null) {
      node.putNull(field);
    } else if (value instanceof Boolean b) {
      node.put(field, b);
    } else if (value instanceof Short || value instanceof Integer) {
      node.put(field, ((Number) value).intValue());
    } else if (value instanceof Long l) {
      node.put(field, l);
    } else if (value instanceof Float f) {
      node.put(field, f);
    } else if (value instanceof Double d) {
      node.put(field, d);
    } else if (value instanceof BigDecimal decimal) {
      node.put(field, decimal);
    } else if (value instanceof String s) {
      node.put(field, s);
    } else {
      node.put(field, text(value));
    }
  }

  /** The first line of a throwable's message (its class name when it has none). */
  public static String firstLine(Throwable e) {
    return CommandLine.firstLine(e);
  }

  /**
   * Where a command's output goes: {@code --output}'s file (created or replaced, UTF-8; the caller
   * closes it), or {@code out}.
   *
   * @throws IllegalArgumentException naming {@code --output} when the file cannot be written (a
   *     directory, a plain file above it, no permission)
   */
  public static java.io.PrintStream output(TableReadOptions options, java.io.PrintStream out) {
    if (options.getOutput() == null) {
      return out;
    }
    CommandLine.writableFile("output", options.getOutput());
    try {
      return new java.io.PrintStream(
          java.nio.file.Files.newOutputStream(java.nio.file.Path.of(options.getOutput())),
          false,
          java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException | RuntimeException e) {
      throw new IllegalArgumentException(
          "--output " + options.getOutput() + " cannot be written: " + firstLine(e));
    }
  }
}
