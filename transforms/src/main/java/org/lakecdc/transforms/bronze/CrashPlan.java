package org.lakecdc.transforms.bronze;

import java.io.Serializable;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Crash tests only: where a job stops and what it throws there. Carried as one nullable field by
 * the values that configure a write ({@link DeltaTarget#crash()}, {@link WriteChunksToDelta},
 * {@code SilverTarget}, the pipelines' job configuration); null in production, where every check
 * below is a no-op. Serializable: it travels to the workers with the transforms.
 *
 * <p>A plan stops one of three sequences, its {@link Scope}: a change batch's commits (and the
 * launcher's re-snapshot steps), a chunked snapshot's chunk commits, or a silver apply's waves.
 * Each point of a sequence calls one method ({@link #at}, {@link #atStep}, {@link #stops}), which
 * throws when the plan names that point.
 *
 * @param scope which commit sequence is stopped
 * @param point where in it
 * @param at the batch id ({@link Scope#BATCH}), the chunk index ({@link Scope#CHUNK}; -1 for the
 *     first chunk the run commits) or the bronze batch whose silver apply stops ({@link
 *     Scope#SILVER}); -1 for a launcher step
 * @param failure what is thrown there
 */
public record CrashPlan(Scope scope, CrashPoint point, long at, CrashPoint.Failure failure)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The commit sequence a plan stops. */
  public enum Scope {
    /**
     * A change batch's commits (data files, bronze, facts) and the launcher's re-snapshot steps.
     */
    BATCH,
    /** A chunked snapshot's chunk commits ({@link WriteChunksToDelta}). */
    CHUNK,
    /**
     * The silver apply after a bronze batch: in its second wave, after the wave's files are written
     * and before its silver commit (its first wave is committed).
     */
    SILVER,
    /**
     * The history apply after a bronze batch: in its second wave, after the wave's file is written
     * and before its history commit (its first wave is committed).
     */
    HISTORY,
    /** The history apply after a bronze batch: right after its second wave's history commit. */
    HISTORY_COMMITTED
  }

  public CrashPlan {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(point, "point");
    Objects.requireNonNull(failure, "failure");
  }

  /** Stops batch {@code batch} at {@code point}, throwing {@link CrashPoint.SimulatedCrash}. */
  public static CrashPlan batch(CrashPoint point, long batch) {
    return batch(point, batch, CrashPoint.Failure.EXCEPTION);
  }

  /**
   * Stops batch {@code batch} at {@code point}, throwing {@code failure} (crash and fatal-error
   * tests); a launcher step ({@link CrashPoint#AFTER_RECOVERY_RECORDED} and after) is stopped
   * whatever the batch, with {@link CrashPoint.SimulatedCrash}.
   */
  public static CrashPlan batch(CrashPoint point, long batch, CrashPoint.Failure failure) {
    return new CrashPlan(Scope.BATCH, point, batch, failure);
  }

  /**
   * Stops chunk {@code chunk}'s commit at {@code point} ({@link CrashPoint#AFTER_DATA_FILES}: its
   * files written, before its bronze commit; {@link CrashPoint#AFTER_BRONZE_COMMIT}: before its
   * facts row; {@link CrashPoint#AFTER_FACTS_COMMIT}: after its facts row, before the next chunk or
   * the completion row), throwing {@link CrashPoint.SimulatedCrash} once per committer.
   *
   * @throws IllegalArgumentException when {@code chunk} is negative
   */
  public static CrashPlan chunk(CrashPoint point, int chunk) {
    if (chunk < 0) {
      throw new IllegalArgumentException("A crash chunk must be at least 0, not " + chunk);
    }
    return new CrashPlan(Scope.CHUNK, point, chunk, CrashPoint.Failure.EXCEPTION);
  }

  /** Stops the first chunk the run commits at {@code point} (see {@link #chunk}). */
  public static CrashPlan firstChunk(CrashPoint point) {
    return new CrashPlan(Scope.CHUNK, point, -1, CrashPoint.Failure.EXCEPTION);
  }

  /**
   * Stops the silver apply after bronze batch {@code batch} in its second wave, after the wave's
   * files are written ({@link CrashPoint#AFTER_DATA_FILES}) and before its silver commit.
   */
  public static CrashPlan silver(long batch) {
    return new CrashPlan(
        Scope.SILVER, CrashPoint.AFTER_DATA_FILES, batch, CrashPoint.Failure.EXCEPTION);
  }

  /**
   * Stops the history apply after bronze batch {@code batch} in its second wave: before its commit
   * (its file written), or right after it.
   */
  public static CrashPlan history(long batch, boolean afterCommit) {
    return new CrashPlan(
        afterCommit ? Scope.HISTORY_COMMITTED : Scope.HISTORY,
        CrashPoint.AFTER_DATA_FILES,
        batch,
        CrashPoint.Failure.EXCEPTION);
  }

  /**
   * Whether this plan stops number {@code n} (batch id, chunk index or bronze batch id) of {@code
   * scope} at {@code point}. A {@link Scope#CHUNK} plan for chunk -1 stops any chunk.
   */
  public boolean stops(Scope scope, CrashPoint point, long n) {
    return this.scope == scope
        && this.point == point
        && (at == n || (scope == Scope.CHUNK && at < 0));
  }

  /**
   * Throws this plan's failure for {@code point} of number {@code n}.
   *
   * @throws CrashPoint.SimulatedCrash for {@link CrashPoint.Failure#EXCEPTION}
   * @throws OutOfMemoryError for {@link CrashPoint.Failure#OUT_OF_MEMORY}
   * @throws StackOverflowError for {@link CrashPoint.Failure#STACK_OVERFLOW}
   */
  public void raise(CrashPoint point, long n) {
    failure.raise(point, n);
  }

  /**
   * The check at {@code point} of change batch {@code batchId}: throws {@code plan}'s failure when
   * it names that point and batch; nothing when {@code plan} is null.
   */
  public static void at(@Nullable CrashPlan plan, CrashPoint point, long batchId) {
    if (plan != null && plan.stops(Scope.BATCH, point, batchId)) {
      plan.raise(point, batchId);
    }
  }

  /**
   * The check at a launcher step {@code point} (a re-snapshot's steps): throws {@link
   * CrashPoint.SimulatedCrash} (batch -1) when {@code plan} names that point, whatever its batch;
   * nothing when {@code plan} is null.
   */
  public static void atStep(@Nullable CrashPlan plan, CrashPoint point) {
    if (plan != null && plan.scope == Scope.BATCH && plan.point == point) {
      throw new CrashPoint.SimulatedCrash(point, -1);
    }
  }
}
