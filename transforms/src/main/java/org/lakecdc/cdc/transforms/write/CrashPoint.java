package org.lakecdc.cdc.transforms.write;

/**
 * Points of the commit sequence of a batch where crash tests stop the job: data files written but
 * not committed; bronze committed but not its facts row; facts committed but not the verdict. The
 * job throws {@link SimulatedCrash} there; a rerun must then write every change exactly once, one
 * facts row per batch, and a verdict that never moves backwards nor ahead of the data.
 */
public enum CrashPoint {
  /** After the batch's data files are written, before its bronze commit. */
  AFTER_DATA_FILES,
  /** After the batch's bronze commit, before its facts commit. */
  AFTER_BRONZE_COMMIT,
  /** After the batch's facts commit, before the verdict is advanced. */
  AFTER_FACTS_COMMIT;

  /** The failure a crash test injects. */
  public static final class SimulatedCrash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SimulatedCrash(CrashPoint point, long batchId) {
      super("Simulated crash " + point + " of batch " + batchId);
    }
  }
}
