package org.lakecdc.pipelines.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.lakecdc.io.mssqlcdc.client.FileErrors;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.options.OutputOptions;
import org.lakecdc.pipelines.options.SqlServerOptions;

/**
 * The tables of a run of many ({@code --tables} or {@code --tablesFile}) and each table's command
 * line: the run's options, then the table's own (which win, their names matched ignoring case),
 * then the table's capture instance, target ({@code --targetTemplate}), app id ({@code
 * --appIdTemplate}) and silver ({@code --silverTemplate}, when given) unless its own options name
 * them. A table's capture instance is always the one it is listed under.
 *
 * <p>{@code --tablesFile} format: one table a line; the first word is the capture instance, the
 * rest are options of that table in the command line's {@code --name=value} form (a value with
 * spaces in single or double quotes); blank lines and everything after {@code #} are ignored.
 */
public final class TablesOption {
  /** The placeholder of the templates: the capture instance. */
  public static final String CI = "{ci}";

  /**
   * Options that belong to the run and cannot differ per table: the source, the shared tables, the
   * runner and the console.
   */
  private static final Set<String> RUN_ONLY =
      Set.of(
          "tables",
          "tablesFile",
          "targetTemplate",
          "appIdTemplate",
          "silverTemplate",
          "captureInstance",
          "fakePath",
          "buildDemo",
          "connectionUrl",
          "user",
          "passwordEnv",
          "passwordFile",
          "connectTimeout",
          "lockTimeoutMs",
          "sourceTimeZone",
          "hadoopConf",
          "hadoopConfFile",
          "factsTable",
          "controlTable",
          "continuous",
          "pollIntervalSeconds",
          "runForSeconds",
          "repeatBoundedRuns",
          "demoScale",
          "demoTransactions",
          "runner",
          "logFile",
          "verbose");

  /** The options a table's line may set, by lower-cased name: the canonical names. */
  private static final Map<String, String> TABLE_OPTIONS = tableOptions();

  /**
   * One table of the run.
   *
   * @param captureInstance the capture instance, as listed
   * @param args the table's own options, names canonical ({@code --maxCommitsPerBatch=50})
   * @param origin where it was listed, for messages ({@code --tables}, {@code tables.txt line 3})
   */
  public record Table(String captureInstance, List<String> args, String origin) {}

  private TablesOption() {}

  /** Whether the command line lists tables ({@code --tables} or {@code --tablesFile}). */
  public static boolean listsTables(CdcToDeltaOptions o) {
    return o.getTables() != null || o.getTablesFile() != null;
  }

  /**
   * Refuses {@code --targetTemplate} and {@code --appIdTemplate} on a command line that lists no
   * tables: they would be ignored, and a user who gives one means something by it.
   *
   * @throws IllegalArgumentException naming the option and what to give instead
   */
  public static void refuseTemplatesWithoutTables(String[] args) {
    for (String[] option :
        new String[][] {
          {"targetTemplate", "--target"},
          {"appIdTemplate", "--appId"},
          {"silverTemplate", "--silver"}
        }) {
      if (!CommandLine.values(args, option[0]).isEmpty()) {
        throw new IllegalArgumentException(
            "--"
                + option[0]
                + " applies to the tables of --tables or --tablesFile; for the one table of"
                + " --captureInstance give "
                + option[1]);
      }
    }
  }

  /**
   * The tables {@code o} lists, in order.
   *
   * @throws IllegalArgumentException naming the option (or the file's line) and what it accepts:
   *     both or none given, an empty list, a file that cannot be read, templates without {@code
   *     {ci}}; {@link RefusedLines} naming every refused line at once, in order: an option a table
   *     cannot set, a table listed twice (ignoring case)
   */
  public static List<Table> tables(CdcToDeltaOptions o, String[] args) {
    List<Line> lines = listed(o, args);
    RefusedLines.throwIfAny(lines.stream().map(Line::refusal).toList());
    return lines.stream().map(Line::table).toList();
  }

  /**
   * Every table {@code o} lists, in order, each with its refusal when its line is refused: its
   * words ({@code --tablesFile}: an option a table cannot set, a quote not closed), or its capture
   * instance listed before (ignoring case: {@code <origin>: capture instance <name> is listed twice
   * (names match ignoring case)}). A refused line does not refuse the others, so that every bad
   * line can be named at once.
   *
   * @throws IllegalArgumentException for what refuses the whole listing, naming the option: both or
   *     none given, an empty entry of {@code --tables}, a file that cannot be read or lists no
   *     table, templates without {@code {ci}}, an option that names one table
   */
  public static List<Line> listed(CdcToDeltaOptions o, String[] args) {
    if (o.getTables() != null && o.getTablesFile() != null) {
      throw new IllegalArgumentException(
          "--tables and --tablesFile both list tables: pass one of them");
    }
    for (String single : List.of("captureInstance", "target", "appId")) {
      if (!CommandLine.values(args, single).isEmpty()) {
        throw new IllegalArgumentException(
            "--"
                + single
                + " names one table; with --tables or --tablesFile each table has its own (use"
                + " --targetTemplate and --appIdTemplate, or the table's options in --tablesFile)");
      }
    }
    requireTemplate("targetTemplate", o.getTargetTemplate());
    requireTemplate("appIdTemplate", o.getAppIdTemplate());
    if (o.getSilverTemplate() != null) {
      requireTemplate("silverTemplate", o.getSilverTemplate());
    }
    if (!CommandLine.values(args, "silver").isEmpty()) {
      throw new IllegalArgumentException(
          "--silver names one table's silver; with --tables or --tablesFile use --silverTemplate"
              + " (with {ci}), or a table's own --silver in --tablesFile");
    }
    List<Line> lines = new ArrayList<>();
    if (o.getTables() != null) {
      for (String name : o.getTables().split(",", -1)) {
        if (name.isBlank()) {
          throw new IllegalArgumentException(
              "--tables must list capture instances separated by commas (dbo_orders,dbo_lineitem),"
                  + " without an empty one: '"
                  + o.getTables()
                  + "'");
        }
        lines.add(new Line(new Table(name.strip(), List.of(), "--tables"), null));
      }
    } else {
      lines = lines(o.getTablesFile());
    }
    Set<String> seen = new HashSet<>();
    List<Line> out = new ArrayList<>();
    for (Line line : lines) {
      Table table = line.table();
      if (table != null && !seen.add(table.captureInstance().toLowerCase(Locale.ROOT))) {
        line =
            new Line(
                null,
                table.origin()
                    + ": capture instance "
                    + table.captureInstance()
                    + " is listed twice (names match ignoring case)");
      }
      out.add(line);
    }
    return out;
  }

  /**
   * The command line of {@code table}: {@code shared} without the options that list tables or name
   * one, the table's capture instance, its own options over the shared ones, then its target and
   * app id from the templates unless its own options give them.
   */
  public static String[] tableArgs(String[] shared, Table table, CdcToDeltaOptions o) {
    Set<String> own = new HashSet<>();
    for (String arg : table.args()) {
      own.add(name(arg));
    }
    List<String> out = new ArrayList<>();
    for (String arg : shared) {
      String name = name(arg);
      if (Set.of("tables", "tablesFile", "targetTemplate", "appIdTemplate", "silverTemplate")
              .contains(name)
          || own.contains(name)) {
        continue;
      }
      out.add(arg);
    }
    out.addAll(table.args());
    out.add("--captureInstance=" + table.captureInstance());
    if (!own.contains("target")) {
      out.add(
          "--target="
              + o.getTargetTemplate()
                  .replace(CI, table.captureInstance().toLowerCase(Locale.ROOT)));
    }
    if (!own.contains("appId")) {
      out.add("--appId=" + o.getAppIdTemplate().replace(CI, table.captureInstance()));
    }
    if (!own.contains("silver") && o.getSilverTemplate() != null) {
      out.add(
          "--silver="
              + o.getSilverTemplate()
                  .replace(CI, table.captureInstance().toLowerCase(Locale.ROOT)));
    }
    return out.toArray(String[]::new);
  }

  public static void requireTemplate(String option, String value) {
    if (value == null || !value.contains(CI)) {
      throw new IllegalArgumentException(
          "--" + option + "='" + value + "' must contain '" + CI + "' (the capture instance)");
    }
  }

  /**
   * One listed line of a {@code --tablesFile}: its table, or why the line is refused.
   *
   * @param table the table the line lists, or null when refused
   * @param refusal one line naming the file and line and what is wrong ({@code --tablesFile
   *     t.options line 3: '-x' is not an option (--name=value after the capture instance)}), or
   *     null
   */
  public record Line(Table table, String refusal) {}

  /**
   * Every line of {@code file} that lists a table (blank and comment lines left out), each parsed
   * alone: a refused line does not refuse the others. A continuous run re-reads its file with it.
   *
   * @throws IllegalArgumentException when the file cannot be read or lists no table at all
   */
  public static List<Line> lines(String file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "--tablesFile " + file + " cannot be read: " + FileErrors.reason(e));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "--tablesFile " + file + " cannot be read: " + CommandLine.firstLine(e));
    }
    List<Line> tables = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String origin = "--tablesFile " + file + " line " + (i + 1);
      try {
        List<String> words = words(lines.get(i), origin);
        if (words.isEmpty()) {
          continue;
        }
        String ci = words.get(0);
        if (ci.startsWith("--")) {
          throw new IllegalArgumentException(
              origin + ": a line starts with the capture instance, not the option " + ci);
        }
        List<String> args = new ArrayList<>();
        for (String word : words.subList(1, words.size())) {
          args.add(canonical(word, origin));
        }
        tables.add(new Line(new Table(ci, List.copyOf(args), origin), null));
      } catch (IllegalArgumentException e) {
        tables.add(new Line(null, e.getMessage()));
      }
    }
    if (tables.isEmpty()) {
      throw new IllegalArgumentException(
          "--tablesFile " + file + " lists no table (one capture instance a line)");
    }
    return tables;
  }

  /** {@code word} with its option name in the canonical case, or refused. */
  private static String canonical(String word, String origin) {
    if (!word.startsWith("--") || word.length() == 2) {
      throw new IllegalArgumentException(
          origin + ": '" + word + "' is not an option (--name=value after the capture instance)");
    }
    int eq = word.indexOf('=');
    String given = eq < 0 ? word.substring(2) : word.substring(2, eq);
    String lower = given.toLowerCase(Locale.ROOT);
    for (String runOnly : RUN_ONLY) {
      if (runOnly.toLowerCase(Locale.ROOT).equals(lower)) {
        throw new IllegalArgumentException(
            origin
                + ": --"
                + runOnly
                + " is an option of the whole run, not of one table: give it on the command line");
      }
    }
    String name = TABLE_OPTIONS.get(lower);
    if (name == null) {
      throw new IllegalArgumentException(
          origin
              + ": --"
              + given
              + " is not an option of a table (a table's options: "
              + String.join(", ", new java.util.TreeSet<>(TABLE_OPTIONS.values()))
              + ")");
    }
    return "--" + name + (eq < 0 ? "" : word.substring(eq));
  }

  /** The option name of {@code arg} ({@code --name=value} or {@code --name}), or "". */
  private static String name(String arg) {
    if (!arg.startsWith("--")) {
      return "";
    }
    int eq = arg.indexOf('=');
    return eq < 0 ? arg.substring(2) : arg.substring(2, eq);
  }

  /** The words of a line before any {@code #}, quotes kept together and removed. */
  static List<String> words(String line, String origin) {
    List<String> words = new ArrayList<>();
    StringBuilder word = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          word.append(c);
        }
        continue;
      }
      if (c == '#') {
        break;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        inWord = true;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          words.add(word.toString());
          word.setLength(0);
          inWord = false;
        }
      } else {
        word.append(c);
        inWord = true;
      }
    }
    if (quote != 0) {
      throw new IllegalArgumentException(origin + ": a quote (" + quote + ") is not closed");
    }
    if (inWord) {
      words.add(word.toString());
    }
    return words;
  }

  /**
   * The options of {@link CdcToDeltaOptions} a table may set, by lower-cased name: its own and its
   * mixins' in this project's options package, but neither where the output goes ({@link
   * OutputOptions}) nor how the source is reached ({@link SqlServerOptions}), nor {@link
   * #RUN_ONLY}.
   */
  private static Map<String, String> tableOptions() {
    Map<String, String> names = new LinkedHashMap<>();
    for (java.lang.reflect.Method m : CdcToDeltaOptions.class.getMethods()) {
      Class<?> declaring = m.getDeclaringClass();
      if (!declaring.getPackage().equals(CdcToDeltaOptions.class.getPackage())
          || declaring == OutputOptions.class
          || declaring == SqlServerOptions.class) {
        continue;
      }
      Optional<String> property = property(m.getName());
      if (property.isPresent()
          && m.getParameterCount() == 0
          && !RUN_ONLY.contains(property.get())) {
        names.put(property.get().toLowerCase(Locale.ROOT), property.get());
      }
    }
    return names;
  }

  private static Optional<String> property(String method) {
    for (String prefix : new String[] {"get", "is"}) {
      if (method.startsWith(prefix) && method.length() > prefix.length()) {
        String rest = method.substring(prefix.length());
        return Optional.of(rest.substring(0, 1).toLowerCase(Locale.ROOT) + rest.substring(1));
      }
    }
    return Optional.empty();
  }
}
