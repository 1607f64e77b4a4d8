package org.lakecdc.pipelines;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * Parses a job's command line with Beam's {@link PipelineOptionsFactory} and turns its errors into
 * one line that names the option: Beam reports a value of the wrong type without the option's name
 * ({@code Cannot deserialize value of type `int` from String "abc"}), so the argument holding the
 * value is looked up and named.
 */
final class CommandLine {
  private static final Pattern QUOTED = Pattern.compile("\"([^\"]*)\"");
  private static final Pattern NUMBER = Pattern.compile("numeric value \\(([^)]*)\\)");

  /** Beam's message for an option the options interface does not have. */
  private static final Pattern UNKNOWN =
      Pattern.compile("missing a property named '([^']*)'(?:\\. Did you mean '([^']*)'\\?)?");

  private CommandLine() {}

  /**
   * Parses {@code args} as {@code type}.
   *
   * @throws IllegalArgumentException with one line naming the option and the value
   */
  static <T extends PipelineOptions> T parse(String[] args, Class<T> type) {
    PipelineOptionsFactory.register(type);
    try {
      return PipelineOptionsFactory.fromArgs(args).withValidation().as(type);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(explain(args, e), e);
    }
  }

  static String explain(String[] args, IllegalArgumentException e) {
    String message = firstLine(e);
    Matcher unknown = UNKNOWN.matcher(message);
    if (unknown.find()) {
      return "Unknown option --"
          + unknown.group(1)
          + (unknown.group(2) != null ? "; did you mean --" + unknown.group(2) + "?" : "")
          + " (docs/options.md lists the options)";
    }
    if (!message.contains("Cannot deserialize") && !message.contains("Overflow")) {
      return message;
    }
    String value = null;
    Matcher quoted = QUOTED.matcher(message);
    if (quoted.find()) {
      value = quoted.group(1);
    }
    Matcher number = NUMBER.matcher(message);
    if (value == null && number.find()) {
      value = number.group(1);
    }
    String expected =
        message.contains("`int`") || message.contains("Integer") ? "an integer" : "a number";
    if (message.contains("`double`") || message.contains("Double")) {
      expected = "a number";
    }
    if (value != null) {
      for (String arg : args) {
        int eq = arg.indexOf('=');
        if (arg.startsWith("--") && eq > 2 && arg.substring(eq + 1).strip().equals(value.strip())) {
          return arg.substring(0, eq) + " must be " + expected + " in range, not '" + value + "'";
        }
      }
    }
    return message;
  }

  static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }
}
