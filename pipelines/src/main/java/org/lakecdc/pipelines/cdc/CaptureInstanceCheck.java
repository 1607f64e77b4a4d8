package org.lakecdc.pipelines.cdc;

import java.util.List;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.pipelines.cli.OptionRefusedException;

/**
 * Refuses a capture instance the source does not have before anything is written, naming where it
 * was given ({@code --captureInstance}, or a {@code --tablesFile}'s file and line), the name, and
 * the capture instances the source has: a mistyped name is the user's to fix, not a failed run.
 */
public final class CaptureInstanceCheck {
  /**
   * A capture instance as the command line gave it.
   *
   * @param captureInstance the name
   * @param where where it was given: {@code --captureInstance}, {@code --tablesFile <file> line
   *     <n>}
   */
  public record Given(String captureInstance, String where) {}

  private CaptureInstanceCheck() {}

  /**
   * Looks each capture instance up in the source, in one connection.
   *
   * @param factory the source
   * @param given the capture instances to find, in the order they were given
   * @throws OptionRefusedException for the first one the source has not: {@code <where>: capture
   *     instance '<name>' not found in the source: nothing was written; its capture instances are
   *     <a>, <b> and <c>} (or {@code it has no capture instances})
   */
  public static void check(CdcClientFactory factory, List<Given> given) {
    if (given.isEmpty()) {
      return;
    }
    try (CdcClient client = factory.open()) {
      for (Given g : given) {
        try {
          client.captureInstances(g.captureInstance());
        } catch (CaptureInstanceNotFoundError e) {
          throw new OptionRefusedException(
              g.where()
                  + ": capture instance '"
                  + g.captureInstance()
                  + "' not found in the source: nothing was written; "
                  + known(e.existing()));
        }
      }
    }
  }

  /**
   * Looks every capture instance of {@code --tables} up in the source, in one connection, and
   * refuses them all at once.
   *
   * @param factory the source
   * @param names the capture instances in the order {@code --tables} lists them
   * @throws OptionRefusedException naming every one the source has not: {@code --tables: capture
   *     instances 'a' and 'b' not found in the source: nothing was written; its capture instances
   *     are …}
   */
  public static void checkTables(CdcClientFactory factory, List<String> names) {
    if (names.isEmpty()) {
      return;
    }
    List<String> unknown = new java.util.ArrayList<>();
    List<String> existing = List.of();
    try (CdcClient client = factory.open()) {
      for (String name : names) {
        try {
          client.captureInstances(name);
        } catch (CaptureInstanceNotFoundError e) {
          unknown.add(name);
          existing = e.existing();
        }
      }
    }
    if (!unknown.isEmpty()) {
      throw new OptionRefusedException(
          "--tables: "
              + (unknown.size() == 1 ? "capture instance " : "capture instances ")
              + joined(unknown.stream().map(ci -> "'" + ci + "'").toList())
              + " not found in the source: nothing was written; "
              + known(existing));
    }
  }

  /**
   * What the source has, for a refusal: {@code its capture instances are <a>, <b> and <c>}, {@code
   * its capture instance is <a>}, or {@code it has no capture instances}.
   */
  static String known(List<String> existing) {
    if (existing.isEmpty()) {
      return "it has no capture instances";
    }
    return (existing.size() == 1 ? "its capture instance is " : "its capture instances are ")
        + joined(existing);
  }

  /** Names as the refusals list them: {@code a}, {@code a and b}, {@code a, b and c}. */
  static String joined(List<String> names) {
    if (names.size() == 1) {
      return names.get(0);
    }
    return String.join(", ", names.subList(0, names.size() - 1))
        + " and "
        + names.get(names.size() - 1);
  }
}
