package org.lakecdc.pipelines.silver;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import org.apache.beam.sdk.PipelineResult;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.RecordedFailure;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.ApplyChangesToSilver;
import org.lakecdc.transforms.silver.ApplyResult;
import org.lakecdc.transforms.silver.DerivedTarget;
import org.lakecdc.transforms.silver.SilverApplier;
import org.lakecdc.transforms.silver.SilverTarget;

/**
 * The launcher's part of a run's silver ({@code --silver}, {@code --silverTemplate}): once the
 * pipeline has ended (or found nothing new), one more apply of each table's silver brings it up to
 * everything bronze holds, also when the pipeline committed nothing (a rerun after a crash between
 * a bronze commit and its silver apply) and prints the table's silver line.
 */
public final class SilverRun {
  private SilverRun() {}

  /**
   * Applies {@code plan}'s silver, if it has one, and prints {@code Silver <ci> <path>: ...}: the
   * position {@code applied_lsn}, the verdict {@code finalized_until} (UTC), the waves and keys
   * applied in this run (the pipeline's counters plus this apply's), and whether it was rebuilt.
   * With {@code isolate}, a table whose silver failed in this run is not applied again, and a
   * failure of this apply is recorded ({@link ApplyChangesToSilver#failure}) instead of thrown.
   *
   * @param result the finished pipeline, or null when none ran
   * @throws RuntimeException the apply's failure, without {@code isolate}
   */
  public static void catchUp(
      TablePlan plan, @Nullable PipelineResult result, boolean isolate, PrintStream out) {
    SilverTarget silver = plan.silver();
    if (silver == null) {
      return;
    }
    DeltaTables tables = plan.tables();
    String name = plan.config().captureInstance();
    if (isolate && failedInThisRun(plan, silver, out)) {
      return;
    }
    ApplyResult applied;
    try {
      applied = new SilverApplier(tables, Clock.systemUTC()).apply(silver.spec());
    } catch (RuntimeException e) {
      if (!isolate) {
        throw e;
      }
      recordFailure(plan, silver, e, out);
      return;
    }
    String table = RunCounters.tableNamespace(silver.appId());
    long waves = applied.waves();
    long keys = applied.keysApplied();
    boolean rebuilt = applied.rebuilt();
    if (result != null) {
      waves += RunCounters.counter(result, table, ApplyChangesToSilver.WAVES);
      keys += RunCounters.counter(result, table, ApplyChangesToSilver.KEYS_APPLIED);
      rebuilt |= RunCounters.counter(result, table, ApplyChangesToSilver.REBUILDS) > 0;
    }
    out.println(line(name, silver.silver(), applied, rebuilt, waves, keys));
  }

  /**
   * Whether {@code target}'s table failed in this run (its stream or a table derived from it, a
   * {@code table_failed} record of this run): then prints {@code <Kind> <ci> <path>: not applied
   * after this run's failure: <record>} ({@code Silver …}, {@code History …}).
   */
  public static boolean failedInThisRun(TablePlan plan, DerivedTarget target, PrintStream out) {
    if (target.facts() == null) {
      return false;
    }
    Optional<RecordedFailure> failed =
        RecordedFailure.last(plan.tables(), target.facts(), target.appId())
            .filter(f -> f.runStartedAt().equals(target.runStartedAt()));
    failed.ifPresent(
        f ->
            out.printf(
                "%s %s %s: not applied after this run's failure: %s%n",
                capitalized(target.kind()),
                plan.config().captureInstance(),
                target.path(),
                f.text()));
    return failed.isPresent();
  }

  /**
   * Records the failure of the launcher's apply of {@code target} ({@link
   * ApplyChangesToSilver#failure} at bronze's position) and prints {@code Stopped <kind> <ci>
   * <path>: <record>}.
   */
  public static void recordFailure(
      TablePlan plan, DerivedTarget target, RuntimeException e, PrintStream out) {
    DeltaTables tables = plan.tables();
    StreamPosition position =
        StreamPosition.fromJson(
                tables.domainMetadata(target.bronze(), StreamPosition.BRONZE_DOMAIN))
            .orElse(plan.start());
    RecordedFailure failure =
        ApplyChangesToSilver.failure(
            target,
            position.batchId(),
            position.endLsn(),
            position.endCommitTime(),
            Instant.now(),
            e);
    failure.write(tables, target.facts());
    out.printf(
        "Stopped %s %s %s: %s%n",
        target.kind(), plan.config().captureInstance(), target.path(), failure.text());
  }

  private static String capitalized(String kind) {
    return kind.substring(0, 1).toUpperCase(java.util.Locale.ROOT) + kind.substring(1);
  }

  /**
   * The silver line of a table: {@code Silver <ci> <path>: [rebuilt, ]applied_lsn <lsn>,
   * finalized_until <time> UTC, <n> waves, <k> keys applied} ({@code none yet} for a missing
   * position or verdict; {@code bronze not found} when bronze does not exist).
   */
  public static String line(
      String name, String path, ApplyResult applied, boolean rebuilt, long waves, long keys) {
    if (!applied.bronzeFound()) {
      return "Silver " + name + " " + path + ": bronze not found, nothing applied";
    }
    return String.format(
        java.util.Locale.ROOT,
        "Silver %s %s: %sapplied_lsn %s, finalized_until %s, %s, %s applied",
        name,
        path,
        rebuilt ? "rebuilt, " : "",
        applied.appliedLsn() == null ? "none yet" : applied.appliedLsn(),
        applied.finalizedUntil() == null ? "none yet" : applied.finalizedUntil() + " UTC",
        Counts.of(waves, "wave", "waves"),
        Counts.of(keys, "key", "keys"));
  }
}
