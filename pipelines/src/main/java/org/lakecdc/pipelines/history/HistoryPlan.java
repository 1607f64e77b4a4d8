package org.lakecdc.pipelines.history;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import org.apache.beam.sdk.PipelineResult;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.silver.SilverRun;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.pipelines.targets.SilverPlan;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.history.HistoryApplier;
import org.lakecdc.transforms.history.HistoryResult;
import org.lakecdc.transforms.history.HistoryTarget;
import org.lakecdc.transforms.silver.ApplyChangesToSilver;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * The main job's history as a pipeline stage: the {@link HistoryTarget} of a planned table, which
 * the pipeline applies after each bronze commit beside silver ({@link ApplyChangesToSilver}), and
 * the launcher's apply once the pipeline has ended ({@link #catchUp}), which brings the history up
 * to everything bronze holds and prints the table's history line.
 */
public final class HistoryPlan {
  private HistoryPlan() {}

  /**
   * The history target of {@code plan}, or null when its table keeps no history: the stream's app
   * id and bronze (of the generation the plan writes), the keys silver would use ({@code --keys},
   * else the source's unique index), the configuration's tracked columns, wave size and apply
   * interval ({@code --silverWaveRows}, {@code --silverIntervalSeconds}).
   *
   * @throws org.lakecdc.pipelines.cli.OptionRefusedException naming {@code --keys}
   */
  public static @Nullable HistoryTarget target(TablePlan plan) {
    Target target = plan.target();
    JobConfig config = target.config();
    if (config.historyPath() == null) {
      return null;
    }
    SilverPlan.Resolved resolved =
        SilverPlan.resolve(
            config.clientFactory(),
            config.captureInstance(),
            config.keys(),
            SilverTable.capturedColumns(plan.changeSchema()));
    return new HistoryTarget(
        target.streamAppId(),
        target.bronze(),
        config.historyPath(),
        target.control(),
        target.facts(),
        resolved.captureInstances(),
        resolved.keys(),
        config.historyColumns(),
        config.granularity(),
        config.silverWaveRows(),
        plan.startedAt(),
        config.hadoopConf(),
        Duration.ofSeconds(config.silverIntervalSeconds()),
        config.crash());
  }

  /**
   * Applies {@code plan}'s history, if it has one, and prints {@link HistoryRun#line} with this
   * run's totals (the pipeline's counters plus this apply's). With {@code isolate}, a table whose
   * stream, silver or history failed in this run is not applied again ({@code History <ci> <path>:
   * not applied after this run's failure: <record>}), and a failure of this apply is recorded
   * ({@link ApplyChangesToSilver#failure}, printed {@code Stopped history <ci> <path>: <record>})
   * instead of thrown.
   *
   * @param result the finished pipeline, or null when none ran
   * @throws RuntimeException the apply's failure, without {@code isolate}
   */
  public static void catchUp(
      TablePlan plan, @Nullable PipelineResult result, boolean isolate, PrintStream out) {
    HistoryTarget history = target(plan);
    if (history == null) {
      return;
    }
    DeltaTables tables = plan.tables();
    String name = plan.config().captureInstance();
    if (isolate && SilverRun.failedInThisRun(plan, history, out)) {
      return;
    }
    HistoryResult applied;
    try {
      applied = new HistoryApplier(tables, Clock.systemUTC()).apply(history.spec());
    } catch (RuntimeException e) {
      if (!isolate || history.facts() == null) {
        throw e;
      }
      SilverRun.recordFailure(plan, history, e, out);
      return;
    }
    if (result != null) {
      String table = RunCounters.tableNamespace(history.appId());
      applied =
          new HistoryResult(
              applied.bronzeFound(),
              applied.appliedLsn(),
              applied.finalizedUntil(),
              applied.waves() + (int) RunCounters.counter(result, table, HistoryTarget.WAVES),
              applied.opened() + RunCounters.counter(result, table, HistoryTarget.OPENED),
              applied.closed() + RunCounters.counter(result, table, HistoryTarget.CLOSED),
              applied.updatedInPlace()
                  + RunCounters.counter(result, table, HistoryTarget.UPDATED_IN_PLACE),
              applied.historyVersion());
    }
    out.println(HistoryRun.line(name, history.history(), applied));
  }
}
