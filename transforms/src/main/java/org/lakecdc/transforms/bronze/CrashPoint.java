package org.lakecdc.transforms.bronze;

/**
 * Points of the commit sequence of a batch where crash tests stop the job: data files written but
 * not committed; bronze committed but not its facts row; facts committed but not the verdict; and
 * the steps of a re-snapshot after data loss (recovery recorded, snapshot committed, event
 * written). The job throws {@link SimulatedCrash} there; a rerun must then write every change
 * exactly once, one facts row per batch, and a verdict that never moves backwards nor ahead of the
 * data. What is thrown is the test's {@link Failure}: by default the exception {@link
 * SimulatedCrash}; the fatal-error tests throw a real {@link OutOfMemoryError} or {@link
 * StackOverflowError} on the worker instead, to check that the job still ends. A test names its
 * point in a {@link CrashPlan}.
 */
public enum CrashPoint {
  /** After the batch's data files are written, before its bronze commit. */
  AFTER_DATA_FILES,
  /** After the batch's bronze commit, before its facts commit. */
  AFTER_BRONZE_COMMIT,
  /** After the batch's facts commit, before the verdict is advanced. */
  AFTER_FACTS_COMMIT,
  /**
   * A re-snapshot after data loss: after its recovery is recorded (the {@code snapshot_open} row of
   * the new generation), before its snapshot is read.
   */
  AFTER_RECOVERY_RECORDED,
  /**
   * A re-snapshot: after its snapshot's bronze commit, which starts the new generation at S, before
   * its {@code resnapshot} facts event.
   */
  AFTER_RESNAPSHOT_COMMIT,
  /** A re-snapshot: after its {@code resnapshot} facts event, before the stream starts at S. */
  AFTER_RESNAPSHOT_EVENT;

  /** What a crash test throws at its point. */
  public enum Failure {
    /** {@link SimulatedCrash}, a {@link RuntimeException}: the job's ordinary failure path. */
    EXCEPTION,
    /**
     * A real {@link OutOfMemoryError} ("Java heap space"): an array of 2^31 - 9 longs (16 GiB) is
     * allocated, which no test heap holds; nothing is actually filled.
     */
    OUT_OF_MEMORY,
    /** A real {@link StackOverflowError}: unbounded recursion on the worker's stack. */
    STACK_OVERFLOW;

    /**
     * Throws this failure for {@code point} of batch {@code batchId}.
     *
     * @throws SimulatedCrash for {@link #EXCEPTION}
     * @throws OutOfMemoryError for {@link #OUT_OF_MEMORY}
     * @throws StackOverflowError for {@link #STACK_OVERFLOW}
     */
    public void raise(CrashPoint point, long batchId) {
      switch (this) {
        case EXCEPTION -> throw new SimulatedCrash(point, batchId);
        case OUT_OF_MEMORY -> {
          long[] heap = new long[Integer.MAX_VALUE - 8];
          throw new IllegalStateException(
              "Allocated " + heap.length + " longs: no OutOfMemoryError");
        }
        case STACK_OVERFLOW -> throw new IllegalStateException("Recursed " + recurse(0) + " times");
      }
    }

    private static long recurse(long depth) {
      return recurse(depth + 1) + 1;
    }
  }

  /** The failure a crash test injects by default. */
  public static final class SimulatedCrash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SimulatedCrash(CrashPoint point, long batchId) {
      super("Simulated crash " + point + " of batch " + batchId);
    }
  }
}
