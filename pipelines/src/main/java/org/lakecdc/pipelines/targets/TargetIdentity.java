package org.lakecdc.pipelines.targets;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Optional;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * Which recorded position is a target's own. The facts table is shared: it holds one position per
 * app id ({@link StreamPosition#factsDomain}), and a path can be deleted and a new bronze table
 * created at it. A target is its bronze table, told apart by Delta's table id ({@code
 * metaData.id}); a facts position counts as the target's only when it names that id ({@link
 * StreamPosition#isOf}), so a new target never takes another's position for its own (it would be
 * taken as up to date, with a "complete" verdict and no row; docs/behaviour.md §2.2).
 *
 * <p>Rules, for app id A, bronze table B (id b) and the facts position P recorded under A:
 *
 * <ul>
 *   <li>P names b: B's own position.
 *   <li>P names another bronze table that still exists with P's id: A is that target's app id; B is
 *       refused before anything is written, naming both targets.
 *   <li>P names a table that no longer exists (its path holds no table, or a new one with another
 *       id: a reset target): P is nobody's; B starts as a new target and its first commit replaces
 *       P.
 *   <li>P names no table (written before lakecdc recorded it): B's own when B records a position
 *       under A itself (an established target); otherwise it may be another target's, and B is
 *       refused.
 * </ul>
 */
public final class TargetIdentity {
  private TargetIdentity() {}

  /** "batch N", or "no batch yet" before the first batch (after a snapshot or on a new target). */
  public static String batchText(long batchId) {
    return batchId < 0 ? "no batch yet" : "batch " + batchId;
  }

  /**
   * {@link #check} of the target of {@code config}, under the app id the run will use, printing
   * nothing: what the launcher runs before the log file, the demo's application or any table is
   * written, so that a refused app id leaves nothing behind. Reads only. A run with a seed is
   * checked in planning instead, after the seed's own checks.
   *
   * @param config the table's configuration
   * @throws OptionRefusedException naming both targets and an app id to use instead
   */
  public static void checkBeforeWriting(JobConfig config) {
    if (config.seed() != null) {
      return; // the seed's own checks come first, in planning (TablePlan.check)
    }
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    check(Recovery.continueUnderTargetAppId(Target.of(config), quiet), quiet);
  }

  /**
   * Refuses a target whose app id another live target uses in the same facts table; prints a line
   * when the recorded position is of a table that no longer exists. Reads only; call it before
   * anything is written.
   *
   * @throws OptionRefusedException naming both targets and an app id to use instead (exit code 2)
   */
  static void check(Target target, PrintStream out) {
    Optional<StreamPosition> recorded = recordedFactsPosition(target);
    if (recorded.isEmpty() || owns(target, recorded.get())) {
      return;
    }
    StreamPosition p = recorded.get();
    String where =
        "in the facts table "
            + target.facts()
            + " ("
            + TargetIdentity.batchText(p.batchId())
            + ", end LSN "
            + p.endLsn()
            + ")";
    if (p.targetId() == null) {
      throw new OptionRefusedException(
          "App id '"
              + target.appId()
              + "' already has a position "
              + where
              + ", written by an earlier lakecdc that did not record its target, and target "
              + target.bronze()
              + " has none of its own: it may be another target's; run with --appId="
              + suggestedAppId(target)
              + " (an app id no other target uses)");
    }
    if (p.target() != null && !p.target().equals(target.bronze()) && isLive(target.tables(), p)) {
      throw new OptionRefusedException(
          "App id '"
              + target.appId()
              + "' is already used for target "
              + p.target()
              + " "
              + where
              + ": target "
              + target.bronze()
              + " needs an app id of its own; run with --appId="
              + suggestedAppId(target)
              + " (an app id no other target uses)");
    }
    if (target.bronzePosition().isPresent()) {
      // Said once: the new table has a position of its own by now.
      return;
    }
    out.printf(
        "The facts position of app id '%s' (%s, end LSN %s) is of bronze table %s (table id %s),"
            + " which no longer exists: %s starts as a new target%n",
        target.appId(),
        TargetIdentity.batchText(p.batchId()),
        p.endLsn(),
        p.target(),
        p.targetId(),
        target.bronze());
  }

  /**
   * Refuses a facts table that does not hold the target's facts: the facts table records every
   * batch, so a target whose bronze already has batches needs the facts table it was written with.
   * A crash between a batch's bronze commit and its facts commit leaves at most that last batch
   * without its facts row, which the run writes again from bronze ({@link
   * CdcToDeltaJob#resumePosition}); a facts table with no facts of the target (a new path, an empty
   * or another table) or behind by more than that one batch would leave the earlier batches without
   * facts rows for good. Reads only; call it before anything is written.
   *
   * @throws OptionRefusedException {@code --factsTable <path> <what it holds>, but target <bronze>
   *     already has batches (bronze holds them up to batch <n>, end LSN <lsn>): the facts rows of
   *     its earlier batches are not there; point --factsTable at the table that holds this target's
   *     facts}
   */
  static void requireTargetsFacts(Target target) {
    Optional<StreamPosition> bronze = target.bronzePosition();
    if (bronze.isEmpty()
        || bronze.get().batchId() < 0
        || !bronze.get().appId().equals(target.streamAppId())) {
      // No batch yet, or another app id's target, which resumePosition refuses.
      return;
    }
    long last = bronze.get().batchId();
    String holds;
    if (!target.tables().exists(target.facts())) {
      holds = "does not exist";
    } else {
      Optional<StreamPosition> facts = ownFactsPosition(target);
      long factsBatch = facts.map(StreamPosition::batchId).orElse(-1L);
      if (last - factsBatch <= 1) {
        return;
      }
      holds =
          facts.isEmpty() || factsBatch < 0
              ? "holds no facts of this target"
              : "holds this target's facts only up to batch " + factsBatch;
    }
    throw new OptionRefusedException(
        "--factsTable "
            + target.facts()
            + " "
            + holds
            + ", but target "
            + target.bronze()
            + " already has batches (bronze holds them up to batch "
            + last
            + ", end LSN "
            + bronze.get().endLsn()
            + "): the facts rows of its earlier batches are not there; point --factsTable at the"
            + " table that holds this target's facts");
  }

  /**
   * Refuses a run whose target holds a recorded snapshot it would not find as its own, so it would
   * take the target for new and take a second snapshot into it: bronze records no position and the
   * facts table none of this app id for it, but the target's chunked snapshot is recorded under
   * another app id (its {@code snapshot_open} row names this bronze table, or bronze holds a chunk
   * committed under that app id), or bronze holds chunks whose snapshot the facts table given does
   * not record. Reads only; call it before anything is written.
   *
   * @throws IllegalArgumentException naming the app id the target is written by
   * @throws OptionRefusedException naming {@code --factsTable} when it lacks the snapshot's facts
   */
  static void requireOwnSnapshot(Target target) {
    if (!target.exists()
        || target.bronzePosition().isPresent()
        || ownFactsPosition(target).isPresent()) {
      return;
    }
    Optional<ChunkedSnapshotFacts.ChunkFact> chunk =
        target
            .bronzeDomain(ChunkedSnapshotFacts.BRONZE_DOMAIN)
            .map(ChunkedSnapshotFacts.ChunkFact::fromJson);
    if (chunk.isPresent()) {
      if (!ChunkedSnapshotFacts.ofFamily(chunk.get().appId(), target.appId())) {
        throw writtenByOther(target, chunk.get().appId());
      }
      if (ChunkedSnapshot.read(target)
          .chunked()
          .filter(state -> state.open().s().equals(chunk.get().s()))
          .isEmpty()) {
        throw new OptionRefusedException(
            "--factsTable "
                + target.facts()
                + " holds no facts of the chunked snapshot at S = "
                + chunk.get().s()
                + " whose chunks target "
                + target.bronze()
                + " already holds (up to chunk "
                + chunk.get().chunk()
                + "): point --factsTable at the table that holds this target's facts");
      }
      return;
    }
    for (ChunkedSnapshotFacts.Open open :
        ChunkedSnapshotFacts.opensOfTable(
            target.tables(), target.facts(), target.bronze(), target.bronzeId())) {
      if (!ChunkedSnapshotFacts.ofFamily(open.appId(), target.appId())) {
        throw writtenByOther(target, open.appId());
      }
    }
  }

  /**
   * {@code Target <bronze> is written by app id '<other>', not '<this>': run with --appId=<other's
   * family> or write a new target}.
   */
  static IllegalArgumentException writtenByOther(Target target, String otherAppId) {
    String family = otherAppId.replaceFirst("\\.g[0-9]+$", "");
    return new IllegalArgumentException(
        "Target "
            + target.bronze()
            + " is written by app id '"
            + otherAppId
            + "', not '"
            + target.streamAppId()
            + "': run with --appId="
            + family
            + " or write a new target");
  }

  /**
   * The facts position of the target's app id when it is the target's own (see the class comment);
   * empty otherwise. Bronze must exist.
   */
  public static Optional<StreamPosition> ownFactsPosition(Target target) {
    return recordedFactsPosition(target).filter(p -> owns(target, p));
  }

  private static Optional<StreamPosition> recordedFactsPosition(Target target) {
    if (!target.tables().exists(target.facts())) {
      return Optional.empty();
    }
    return StreamPosition.fromJson(
        target
            .tables()
            .domainMetadata(target.facts(), StreamPosition.factsDomain(target.streamAppId())));
  }

  private static boolean owns(Target target, StreamPosition recorded) {
    if (!target.exists()) {
      return false;
    }
    if (recorded.targetId() == null) {
      return target
          .bronzePosition()
          .filter(own -> own.appId().equals(target.streamAppId()))
          .isPresent();
    }
    return recorded.isOf(target.streamAppId(), target.bronzeId());
  }

  private static boolean isLive(DeltaTables tables, StreamPosition p) {
    try {
      return tables.exists(p.target()) && tables.tableId(p.target()).equals(p.targetId());
    } catch (RuntimeException e) {
      // A target on a file system this run cannot open is taken as live: refusing is safe.
      return true;
    }
  }

  /** The bronze directory's name when it differs from the app id, else the app id with "_2". */
  private static String suggestedAppId(Target target) {
    String path = target.bronze();
    String name = path.substring(path.lastIndexOf('/') + 1);
    return name.isEmpty() || name.equals(target.appId()) ? target.appId() + "_2" : name;
  }
}
