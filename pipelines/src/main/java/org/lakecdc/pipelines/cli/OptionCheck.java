package org.lakecdc.pipelines.cli;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.beans.Introspector;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.util.StringUtils;
import org.lakecdc.pipelines.options.Accepts;

/**
 * Checks a command line's {@code --name=value} arguments against the getters of the registered
 * options interfaces before Beam's {@link PipelineOptionsFactory} parses them, so that a wrong
 * argument is refused in one line naming the option and what it accepts (Beam's own messages name
 * neither): an unknown option (with the known name it was probably meant to be), an option given
 * more than once, an empty value of an option that is not text, a value its type cannot hold
 * (Beam's own conversion, Jackson's, is tried: what Beam would accept passes), an enum option's
 * value that is none of its constants. What the option accepts is its getter's {@link Accepts}, or
 * else what its type holds (true or false; an integer; a number; the constants in lower case).
 *
 * <p>An enum option's value is matched to its constant ignoring case, spaces and underscores
 * ({@code readCommitted} is {@code READ_COMMITTED}), and handed to Beam as the constant's name.
 */
final class OptionCheck {
  /** Beam's converter of option values is Jackson's; the same conversion decides here. */
  private static final ObjectMapper JACKSON = new ObjectMapper();

  /** The most edits between an unknown name and a known one it is taken to mean (as Beam's). */
  private static final int NEAR = 2;

  private static final Pattern INTEGER = Pattern.compile("-?\\d+");

  private OptionCheck() {}

  /**
   * Checks {@code args} against the options {@code PipelineOptionsFactory} knows once {@code type}
   * is registered.
   *
   * @param args the command line, {@code --name=value} arguments (a bare {@code --name} is {@code
   *     true}, as Beam reads it); anything else is left to Beam
   * @param type the job's options interface
   * @param optionsDoc the page listing the options, named by an unknown option's line
   * @return {@code args} with each enum option's value replaced by its constant's name, for Beam
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  static String[] check(String[] args, Class<? extends PipelineOptions> type, String optionsDoc) {
    PipelineOptionsFactory.register(type);
    Map<String, Method> getters = getters();
    Map<String, List<String>> given = CommandLine.given(args);
    for (Map.Entry<String, List<String>> option : given.entrySet()) {
      String name = option.getKey();
      if (name.equals("help")) {
        continue;
      }
      Method getter = getters.get(name);
      if (getter == null) {
        throw new IllegalArgumentException(unknown(name, getters, optionsDoc));
      }
      Class<?> kind = getter.getReturnType();
      if (isMany(kind) || !isChecked(kind)) {
        continue;
      }
      List<String> values = option.getValue();
      if (values.size() > 1) {
        throw new IllegalArgumentException(
            "--"
                + name
                + " is given "
                + (values.size() == 2 ? "twice" : values.size() + " times")
                + " ("
                + listed(values)
                + "): give it once");
      }
      String value = values.get(0);
      if (kind == String.class) {
        continue;
      }
      if (kind.isEnum() && value.isBlank()) {
        // As for an empty text option: the policies were text options once.
        throw new IllegalArgumentException("--" + name + " must not be empty");
      }
      if (value.isEmpty()) {
        throw new IllegalArgumentException(
            "--" + name + " must be " + accepted(getter) + ", not empty");
      }
      if (kind.isEnum()) {
        constant(kind, value)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "--" + name + " must be " + accepted(getter) + ", not '" + value + "'"));
        continue;
      }
      JavaType javaType = JACKSON.getTypeFactory().constructType(getter.getGenericReturnType());
      try {
        JACKSON.convertValue(value, javaType);
      } catch (IllegalArgumentException e) {
        String accepted = accepted(getter);
        if (isIntegral(kind)
            && INTEGER.matcher(value.strip()).matches()
            && new BigInteger(value.strip()).compareTo(BigInteger.valueOf(maxOf(kind))) > 0) {
          accepted += " (at most " + maxOf(kind) + ")";
        }
        throw new IllegalArgumentException(
            "--" + name + " must be " + accepted + ", not '" + value + "'", e);
      }
    }
    List<String> forBeam = new ArrayList<>(args.length);
    for (String arg : args) {
      forBeam.add(enumForBeam(arg, getters));
    }
    return forBeam.toArray(String[]::new);
  }

  /**
   * {@code --name=value} of an enum option as {@code --name=CONSTANT}; any other argument as is.
   */
  private static String enumForBeam(String arg, Map<String, Method> getters) {
    if (arg == null || !arg.startsWith("--") || arg.indexOf('=') < 0) {
      return arg;
    }
    int eq = arg.indexOf('=');
    Method getter = getters.get(arg.substring(2, eq));
    if (getter == null || !getter.getReturnType().isEnum()) {
      return arg;
    }
    return constant(getter.getReturnType(), arg.substring(eq + 1))
        .map(c -> arg.substring(0, eq + 1) + c.name())
        .orElse(arg);
  }

  /**
   * The constant of {@code kind} that {@code text} names, ignoring case, spaces and underscores.
   */
  private static java.util.Optional<Enum<?>> constant(Class<?> kind, String text) {
    String wanted = squeeze(text);
    for (Object constant : kind.getEnumConstants()) {
      Enum<?> e = (Enum<?>) constant;
      if (squeeze(e.name()).equals(wanted)) {
        return java.util.Optional.of(e);
      }
    }
    return java.util.Optional.empty();
  }

  private static String squeeze(String text) {
    return text.strip().toLowerCase(Locale.ROOT).replace("_", "").replace(" ", "");
  }

  /** The line of an unknown option: the nearest known name when one alone is near enough. */
  private static String unknown(String name, Map<String, Method> getters, String optionsDoc) {
    List<String> near = new ArrayList<>();
    for (String known : getters.keySet()) {
      if (StringUtils.getLevenshteinDistance(name, known) <= NEAR) {
        near.add("--" + known);
      }
    }
    return "Unknown option --"
        + name
        + (near.isEmpty() ? "" : "; did you mean " + listed(near, "or") + "?")
        + " ("
        + optionsDoc
        + " lists the options)";
  }

  /** Every property of the registered options interfaces, by name, with its getter. */
  private static Map<String, Method> getters() {
    Map<String, Method> getters = new TreeMap<>();
    for (Class<? extends PipelineOptions> options : PipelineOptionsFactory.getRegisteredOptions()) {
      for (Method method : options.getMethods()) {
        if (method.getParameterCount() != 0
            || method.getReturnType() == void.class
            || Modifier.isStatic(method.getModifiers())) {
          continue;
        }
        String property = property(method.getName());
        if (property != null) {
          getters.putIfAbsent(property, method);
        }
      }
    }
    return getters;
  }

  /** The property a getter's name reads ({@code getFakePath}: {@code fakePath}), or null. */
  private static String property(String method) {
    String rest;
    if (method.startsWith("get") && method.length() > 3) {
      rest = method.substring(3);
    } else if (method.startsWith("is") && method.length() > 2) {
      rest = method.substring(2);
    } else {
      return null;
    }
    return Introspector.decapitalize(rest);
  }

  /** What {@code getter}'s option accepts: its {@link Accepts}, or what its type holds. */
  static String accepted(Method getter) {
    Accepts accepts = getter.getAnnotation(Accepts.class);
    if (accepts != null) {
      return accepts.value();
    }
    Class<?> type = getter.getReturnType();
    if (type == boolean.class || type == Boolean.class) {
      return "true or false";
    }
    if (isIntegral(type)) {
      return "an integer";
    }
    if (type == double.class
        || type == Double.class
        || type == float.class
        || type == Float.class) {
      return "a number";
    }
    if (type.isEnum()) {
      List<String> names = new ArrayList<>();
      for (Object constant : type.getEnumConstants()) {
        names.add(((Enum<?>) constant).name().toLowerCase(Locale.ROOT));
      }
      return listed(names, "or");
    }
    return "text";
  }

  /** A type Beam reads as several values, split at commas: repeating such an option adds values. */
  private static boolean isMany(Class<?> type) {
    return type.isArray() || Collection.class.isAssignableFrom(type);
  }

  /** A type whose values are checked here: text, true or false, a number, an enum. */
  private static boolean isChecked(Class<?> type) {
    return type == String.class
        || type.isEnum()
        || type == boolean.class
        || type == Boolean.class
        || isIntegral(type)
        || type == double.class
        || type == Double.class
        || type == float.class
        || type == Float.class;
  }

  private static boolean isIntegral(Class<?> type) {
    return type == int.class
        || type == Integer.class
        || type == long.class
        || type == Long.class
        || type == short.class
        || type == Short.class;
  }

  private static long maxOf(Class<?> type) {
    if (type == long.class || type == Long.class) {
      return Long.MAX_VALUE;
    }
    if (type == short.class || type == Short.class) {
      return Short.MAX_VALUE;
    }
    return Integer.MAX_VALUE;
  }

  private static String listed(List<String> values) {
    return listed(values, "and");
  }

  /** {@code a, b and c}. */
  private static String listed(List<String> values, String and) {
    if (values.size() == 1) {
      return values.get(0);
    }
    return String.join(", ", values.subList(0, values.size() - 1))
        + " "
        + and
        + " "
        + values.get(values.size() - 1);
  }
}
