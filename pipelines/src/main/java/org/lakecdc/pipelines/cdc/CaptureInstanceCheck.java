package org.lakecdc.pipelines.cdc;

import java.util.ArrayList;
import java.util.List;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.cli.RefusedLines;

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
   * @throws OptionRefusedException for every one the source has not, at once and in order ({@link
   *     #refusals})
   */
  public static void check(CdcClientFactory factory, List<Given> given) {
    RefusedLines.throwIfAny(refusals(factory, given));
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
    check(factory, names.stream().map(ci -> new Given(ci, "--tables")).toList());
  }

  /**
   * Looks every capture instance up in the source, in one connection, and refuses each one it has
   * not: one given elsewhere (a {@code --tablesFile}'s line, {@code --captureInstance}) in its own
   * refusal, {@code <where>: capture instance '<name>' not found in the source: nothing was
   * written; its capture instances are <a>, <b> and <c>} (or {@code it has no capture instances});
   * those of {@code --tables} together, {@code --tables: capture instances 'a' and 'b' not found in
   * the source: …}, at the first of them.
   *
   * @param factory the source
   * @param given the capture instances to find, in the order they were given
   * @return one entry per given, in order: its refusal, or null (found, or named in the {@code
   *     --tables} refusal of an earlier one)
   */
  public static List<String> refusals(CdcClientFactory factory, List<Given> given) {
    List<String> refusals = new ArrayList<>();
    if (given.isEmpty()) {
      return refusals;
    }
    List<String> unknownOfTables = new ArrayList<>();
    int firstOfTables = -1;
    List<String> existing = List.of();
    try (CdcClient client = factory.open()) {
      for (Given g : given) {
        refusals.add(null);
        try {
          client.captureInstances(g.captureInstance());
        } catch (CaptureInstanceNotFoundError e) {
          existing = e.existing();
          if (g.where().equals("--tables")) {
            unknownOfTables.add(g.captureInstance());
            firstOfTables = firstOfTables < 0 ? refusals.size() - 1 : firstOfTables;
          } else {
            refusals.set(
                refusals.size() - 1,
                g.where()
                    + ": capture instance '"
                    + g.captureInstance()
                    + "' not found in the source: nothing was written; "
                    + known(existing));
          }
        }
      }
    }
    if (firstOfTables >= 0) {
      refusals.set(
          firstOfTables,
          "--tables: "
              + (unknownOfTables.size() == 1 ? "capture instance " : "capture instances ")
              + joined(unknownOfTables.stream().map(ci -> "'" + ci + "'").toList())
              + " not found in the source: nothing was written; "
              + known(existing));
    }
    return refusals;
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
