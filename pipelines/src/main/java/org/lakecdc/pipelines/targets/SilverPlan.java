package org.lakecdc.pipelines.targets;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.silver.SilverTable;
import org.lakecdc.transforms.silver.SilverTarget;

/**
 * The silver table of one table of a run, resolved on the launcher before anything is written: its
 * key columns ({@code --keys}, matched to the captured columns ignoring case, or else the columns
 * of the unique index the capture instance uses) and the capture instances whose bronze rows are
 * its own (every instance of the source table, lower-cased), asked of the source.
 */
public final class SilverPlan {
  private SilverPlan() {}

  /**
   * The silver target of {@code target}, or null when it has none.
   *
   * @param changeSchema the read's output schema (bronze's columns)
   * @param runStartedAt when the table's run started (UTC)
   * @throws OptionRefusedException a key that is not a captured column, no {@code --keys} for an
   *     instance without a unique index (one line naming {@code --keys}), or a table of another
   *     kind (another table's bronze, a facts table) at the silver path (naming {@code --silver})
   */
  public static @Nullable SilverTarget target(
      Target target, Schema changeSchema, Instant runStartedAt) {
    if (target.silver() == null) {
      return null;
    }
    refuseAnotherKind(target.tables(), target.silver());
    Resolved resolved =
        resolve(
            target.config().clientFactory(),
            target.captureInstance(),
            target.config().keys(),
            SilverTable.capturedColumns(changeSchema),
            target.config().columns() != null ? "--columns" : "the captured columns",
            "add them to --columns, or pass --keys=<captured columns> for silver");
    return new SilverTarget(
        target.streamAppId(),
        target.bronze(),
        target.silver(),
        target.control(),
        target.facts(),
        resolved.captureInstances(),
        resolved.keys(),
        target.config().granularity(),
        target.config().silverWaveRows(),
        runStartedAt,
        target.config().hadoopConf(),
        java.time.Duration.ofSeconds(target.config().silverIntervalSeconds()),
        target.config().crash());
  }

  /**
   * Refuses a silver path that holds a Delta table of another kind (e.g. another table's bronze):
   * silver would fail there only after bronze had been written.
   *
   * @throws OptionRefusedException naming {@code --silver}, the path and the kind found
   */
  static void refuseAnotherKind(DeltaTables tables, String silverPath) {
    if (!tables.exists(silverPath)) {
      return;
    }
    String silverKind = TableKind.SILVER.propertyValue();
    tables
        .describe(silverPath)
        .kind()
        .filter(kind -> !kind.equals(silverKind))
        .ifPresent(
            kind -> {
              throw new OptionRefusedException(
                  "--silver: "
                      + silverPath
                      + " is a "
                      + kind
                      + " table, not a silver table: give silver a path of its own; nothing was"
                      + " written");
            });
  }

  /**
   * A silver table's capture instances (lower-cased) and key columns (in the captured columns'
   * spelling).
   */
  public record Resolved(List<String> captureInstances, List<String> keys) {}

  /**
   * Resolves the capture instances and keys of {@code captureInstance}'s silver.
   *
   * @param keys {@code --keys} as given, or empty for the source's
   * @param captured the captured columns (bronze's), or null when bronze does not exist yet (the
   *     keys are then taken as given)
   * @throws OptionRefusedException naming {@code --keys}
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError for an unknown instance
   */
  public static Resolved resolve(
      CdcClientFactory factory,
      String captureInstance,
      List<String> keys,
      @Nullable List<String> captured) {
    return resolve(
        factory,
        captureInstance,
        keys,
        captured,
        "the captured columns",
        "pass --keys=<captured columns>");
  }

  /**
   * {@link #resolve(CdcClientFactory, String, List, List)} whose refusal of the source's key
   * columns (no {@code --keys} given) names where the captured columns came from and what to do,
   * never an option the command line did not give.
   *
   * @param columnsOf what {@code captured} are the columns of, e.g. {@code bronze /lake/dbo_x}
   * @param fix what to do when the source's key columns are not among them
   * @throws OptionRefusedException naming {@code --keys} (given keys), or {@code <instance>'s key
   *     column(s) ... are not among the columns of <columnsOf> (...): <fix>}
   */
  public static Resolved resolve(
      CdcClientFactory factory,
      String captureInstance,
      List<String> keys,
      @Nullable List<String> captured,
      String columnsOf,
      String fix) {
    List<CaptureInstance> instances;
    try (CdcClient client = factory.open()) {
      instances = client.captureInstances(captureInstance);
    }
    List<String> names = new ArrayList<>();
    CaptureInstance named = instances.get(instances.size() - 1);
    for (CaptureInstance instance : instances) {
      names.add(instance.name().toLowerCase(Locale.ROOT));
      if (instance.name().equalsIgnoreCase(captureInstance)) {
        named = instance;
      }
    }
    if (!names.contains(captureInstance.toLowerCase(Locale.ROOT))) {
      // The configured instance was disabled since (the stream followed the table to the newer
      // one): bronze's rows it wrote, and a re-snapshot's rows stamped with it, are the table's.
      names.add(0, captureInstance.toLowerCase(Locale.ROOT));
    }
    List<String> given = keys;
    if (given.isEmpty()) {
      given = named.keyColumns();
      if (given.isEmpty()) {
        throw new OptionRefusedException(
            "--keys: capture instance "
                + named.name()
                + " has no unique index (no primary key or index CDC uses), so silver's key"
                + " columns are not known: pass --keys=<captured columns>, e.g. --keys="
                + (captured == null || captured.isEmpty() ? "id" : captured.get(0)));
      }
    }
    if (captured == null) {
      return new Resolved(names, List.copyOf(given));
    }
    Map<String, String> byLowerCase = new LinkedHashMap<>();
    for (String column : captured) {
      byLowerCase.put(column.toLowerCase(Locale.ROOT), column);
    }
    List<String> resolved = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String key : given) {
      String column = byLowerCase.get(key.toLowerCase(Locale.ROOT));
      if (column == null) {
        unknown.add(key);
      } else {
        resolved.add(column);
      }
    }
    if (!unknown.isEmpty() && keys.isEmpty()) {
      throw new OptionRefusedException(
          named.name()
              + "'s key column"
              + (given.size() == 1 ? " " : "s ")
              + String.join(", ", given)
              + " (its unique index) "
              + (unknown.size() == 1 ? "is" : "are")
              + " not among the columns of "
              + columnsOf
              + " ("
              + String.join(", ", captured)
              + "): "
              + fix);
    }
    if (!unknown.isEmpty()) {
      throw new OptionRefusedException(
          "--keys: "
              + String.join(", ", unknown)
              + (unknown.size() == 1 ? " is not a captured column" : " are not captured columns")
              + " of "
              + named.name()
              + " (captured: "
              + String.join(", ", captured)
              + ")");
    }
    return new Resolved(names, resolved);
  }
}
