package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.read.SkippedRange;
import org.lakecdc.transforms.bronze.BatchStats;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Recovery on the launcher, before a table's pipeline: which app id a target continues under, the
 * target's position (Delta is the checkpoint: the later of bronze's and the facts table's), and the
 * repairs of what a crash left (a facts row missing after a bronze commit, a bronze table created
 * but never written, a verdict of a former table at the same path).
 */
public final class Recovery {
  private Recovery() {}

  /**
   * The target to run: {@code target} itself, or, when its app id is the default one (equal to the
   * capture instance's name) and the target was written under another app id that names a capture
   * instance of the same table (or whose last batch read one), {@code target} under that app id.
   * The target's identity is kept when it is configured under the table's newer capture instance
   * after a switch ({@code --captureInstance=dbo_orders_v2} for a target written as {@code
   * dbo_orders}; C043); any other app id mismatch is refused by {@link #resumePosition}.
   */
  public static Target continueUnderTargetAppId(Target target, PrintStream out) {
    if (!target.exists()) {
      return target;
    }
    // A target re-snapshotted after data loss writes generation n under <appId>.g<n>.
    target = Resnapshot.resolveGeneration(target);
    if (!target.appId().equals(target.captureInstance())) {
      return target;
    }
    Optional<StreamPosition> recorded = target.bronzePosition();
    if (recorded.isEmpty() || recorded.get().appId().equals(target.streamAppId())) {
      return target;
    }
    Set<String> instances = new HashSet<>();
    try (CdcClient client = target.config().clientFactory().open()) {
      for (CaptureInstance instance : client.captureInstances(target.captureInstance())) {
        instances.add(instance.name().toLowerCase(Locale.ROOT));
      }
    } catch (CaptureInstanceNotFoundError e) {
      return target;
    }
    String appId = recorded.get().appId();
    if (!instances.contains(appId.toLowerCase(Locale.ROOT))
        && !instances.contains(recorded.get().captureInstance().toLowerCase(Locale.ROOT))) {
      return target;
    }
    out.printf(
        "Target %s is written under app id '%s', from a capture instance of the same table as %s:"
            + " continuing under that app id%n",
        target.bronze(), appId, target.captureInstance());
    return Resnapshot.resolveGeneration(target.with(target.config().withAppId(appId)));
  }

  /**
   * Gives a bronze table that holds nothing yet this run's columns: a run that failed before its
   * first commit (a value of a column without a default mapping that did not convert to its {@code
   * --columns} type, say, or a run of a build before the declared types were checked) leaves bronze
   * created but without a position (its own, the facts table's, a recorded chunked snapshot's) or a
   * data file; the next run's columns replace its own, so a corrected {@code --columns} is taken
   * instead of refused.
   */
  static void takeColumnsIfEmpty(Target target, Schema changeSchema, PrintStream out) {
    if (target.bronzePosition().isPresent()
        || target.tables().hasDataFiles(target.bronze())
        || TargetIdentity.ownFactsPosition(target).isPresent()
        || ChunkedSnapshot.recordedStart(target).isPresent()) {
      return;
    }
    if (target
        .tables()
        .replaceColumnsOfEmptyTable(
            target.bronze(), BronzeTable.definition(changeSchema).columns())) {
      out.printf(
          "Bronze %s holds no row yet: it takes this run's columns (version %d)%n",
          target.bronze(), target.tables().version(target.bronze()));
    }
  }

  /**
   * Removes the control row a former table at the target's path left: a target without a position
   * of its own has no complete period, whatever a deleted table at the same path had vouched for.
   */
  static void forgetFormerVerdict(Target target, Finalization finalization, PrintStream out) {
    finalization
        .forget(target.bronze())
        .ifPresent(
            former ->
                out.printf(
                    "Removed the verdict finalized_until = %s of a former table at %s: this"
                        + " table's verdict follows its own data%n",
                    former, target.bronze()));
  }

  /**
   * The target's position, and with it the one rule of whether a target is new: a target is new
   * exactly when this is empty. Every snapshot records a position when it is recorded: a whole
   * snapshot (bootstrap, re-snapshot) or a seed in its bronze commit, a chunked bootstrap in the
   * facts commit of its {@code snapshot_open} row, a chunked re-snapshot in the bronze commit that
   * starts its generation; a batch in its bronze and facts commits. So a target with any recorded
   * snapshot (open or complete, whole or chunked, of any generation) is never new again, whatever a
   * later run's {@code --snapshot}, {@code --bootstrap} or {@code --startingLsn}.
   *
   * <p>The position is the later of bronze's and the facts table's own (after writing the facts row
   * a crash left missing: bronze committed a batch, its facts commit did not happen); without
   * either, the S of a chunked snapshot of the target's stream (open or complete) whose open row an
   * earlier lakecdc wrote without a position ({@link ChunkedSnapshot#recordedStart}). Only the
   * target's own bronze table counts: a position or an open of a former table at the same path (a
   * reset target) does not.
   *
   * @throws IllegalArgumentException when the target was written by another app id
   */
  public static Optional<StreamPosition> resumePosition(Target target, PrintStream out) {
    Optional<StreamPosition> bronze =
        StreamPosition.fromJson(target.bronzeDomain(StreamPosition.BRONZE_DOMAIN));
    if (bronze.isPresent() && !bronze.get().appId().equals(target.streamAppId())) {
      throw TargetIdentity.writtenByOther(target, bronze.get().appId());
    }
    // The shared facts table's position counts only when it is this bronze table's own.
    Optional<StreamPosition> facts = TargetIdentity.ownFactsPosition(target);
    if (bronze.isPresent()
        && bronze.get().batchId() >= 0
        && (facts.isEmpty() || facts.get().endLsn().isBefore(bronze.get().endLsn()))) {
      writeMissingFacts(target, bronze.get(), out);
      return bronze;
    }
    if (facts.isPresent()
        && (bronze.isEmpty() || facts.get().endLsn().isAfter(bronze.get().endLsn()))) {
      return facts;
    }
    if (bronze.isPresent()) {
      return bronze;
    }
    return target.exists() ? ChunkedSnapshot.recordedStart(target) : Optional.empty();
  }

  /** Rebuilds the facts row of the last bronze batch from the stats stored with its commit. */
  private static void writeMissingFacts(Target target, StreamPosition bronze, PrintStream out) {
    BatchStats stats =
        BatchStats.fromJson(
            target
                .bronzeDomain(BatchStats.BRONZE_DOMAIN)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            "Bronze " + target.bronze() + " has a position but no batch stats")));
    StreamPosition own = bronze.ofTarget(target.bronze(), target.bronzeId());
    out.printf(
        "Writing the facts row of batch %d, which the previous run committed to bronze but not"
            + " to facts%n",
        stats.batchId());
    String json = target.bronzeDomain(BatchStats.BRONZE_DOMAIN).orElseThrow();
    List<SkippedRange> skipped = BatchStats.skippedOf(json);
    List<Row> rows = new ArrayList<>();
    Instant now = Instant.now();
    rows.add(
        stats
            .factsRow(
                target.streamAppId(), bronze.endLsn(), bronze.endCommitTime(), target.bronze())
            .set(FactsTable.WRITTEN_AT, now)
            .build());
    List<LostPeriod> lost = new ArrayList<>();
    for (SkippedRange gap : skipped) {
      rows.add(
          FactsTable.dataSkippedRow(
              target.streamAppId(), stats.batchId(), target.bronze(), gap, now));
      lost.add(
          LostPeriod.of(
              gap.lostFrom(),
              gap.lostTo() == null ? bronze.endCommitTime() : gap.lostTo(),
              target.config().granularity()));
    }
    if (!lost.isEmpty()) {
      // Before the facts commit, as the committer does: no verdict ever covers a gap.
      new Finalization(target.tables(), target.control(), java.time.Clock.systemUTC())
          .recordLost(target.bronze(), lost);
    }
    target.appendFacts(
        rows,
        own.factsAppId(),
        stats.batchId(),
        Map.of(StreamPosition.factsDomain(target.appId()), own.toJson()));
  }
}
