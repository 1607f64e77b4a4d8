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
    if (isolate) {
      Optional<RecordedFailure> failed =
          RecordedFailure.last(tables, silver.facts(), silver.appId())
              .filter(f -> f.runStartedAt().equals(silver.runStartedAt()));
      if (failed.isPresent()) {
        out.printf(
            "Silver %s %s: not applied after this run's failure: %s%n",
            name, silver.silver(), failed.get().text());
        return;
      }
    }
    ApplyResult applied;
    try {
      applied = new SilverApplier(tables, Clock.systemUTC()).apply(silver.spec());
    } catch (RuntimeException e) {
      if (!isolate) {
        throw e;
      }
      StreamPosition position =
          StreamPosition.fromJson(
                  tables.domainMetadata(silver.bronze(), StreamPosition.BRONZE_DOMAIN))
              .orElse(plan.start());
      RecordedFailure failure =
          ApplyChangesToSilver.failure(
              silver,
              position.batchId(),
              position.endLsn(),
              position.endCommitTime(),
              Instant.now(),
              e);
      failure.write(tables, silver.facts());
      out.printf("Stopped silver %s %s: %s%n", name, silver.silver(), failure.text());
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
