package org.lakecdc.io.mssqlcdc.lsn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker.IsBounded;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker.Progress;
import org.apache.beam.sdk.transforms.splittabledofn.SplitResult;
import org.junit.jupiter.api.Test;

/** Claims, checkpoints and resume of the LSN restriction tracker. */
class LsnRangeTrackerTest {
  /** The k-th event LSN of the reference fake: 0x0000002A000001000001 + 0x10 * k. */
  static Lsn event(int k) {
    return Lsn.fromBigInteger(
        Lsn.parse("0x0000002A000001000001")
            .toBigInteger()
            .add(java.math.BigInteger.valueOf(16L * k)));
  }

  @Test
  void claimsCommitsInOrderAndFailsAtTheEnd() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(event(0), event(3)));
    assertTrue(tracker.tryClaim(event(0)));
    assertTrue(tracker.tryClaim(event(2)));
    assertTrue(tracker.tryClaim(event(3)));
    assertFalse(tracker.tryClaim(event(4)));
    assertEquals(event(3), tracker.lastClaimed());
    tracker.checkDone();
  }

  @Test
  void refusesClaimsThatDoNotIncrease() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(event(0), event(3)));
    assertTrue(tracker.tryClaim(event(2)));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> tracker.tryClaim(event(1)));
    assertEquals(
        "Trying to claim LSN 0x0000002A000001000011 while last attempted was"
            + " 0x0000002A000001000021: claims must increase",
        e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> tracker.tryClaim(event(2)));
  }

  @Test
  void refusesClaimsBeforeTheRange() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(event(2), event(3)));
    assertThrows(IllegalArgumentException.class, () -> tracker.tryClaim(event(1)));
  }

  @Test
  void checkpointAfterAClaimResumesRightAfterIt() {
    LsnRange range = LsnRange.closed(event(0), event(9));
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    assertTrue(tracker.tryClaim(event(3)));
    SplitResult<LsnRange> split = tracker.trySplit(0);
    assertEquals(new LsnRange(event(0), event(3).increment()), split.getPrimary());
    assertEquals(new LsnRange(event(3).increment(), range.to(), 1), split.getResidual());
    assertEquals(split.getPrimary(), tracker.currentRestriction());
    assertFalse(tracker.tryClaim(event(4)), "past the checkpoint, claims fail");
    tracker.checkDone();

    LsnRangeTracker resumed = new LsnRangeTracker(split.getResidual());
    assertTrue(resumed.tryClaim(event(4)));
    assertTrue(resumed.tryClaim(event(9)));
    resumed.checkDone();
  }

  /** Each claim is one batch: the residual's first batch is the primary's plus the claims made. */
  @Test
  void theResidualContinuesTheBatchNumbers() {
    LsnRange range = LsnRange.closed(event(0), event(9)).withFirstBatch(5);
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    assertTrue(tracker.tryClaim(event(1)));
    assertTrue(tracker.tryClaim(event(4)));
    SplitResult<LsnRange> split = tracker.trySplit(0);
    assertEquals(new LsnRange(event(0), event(4).increment(), 5), split.getPrimary());
    assertEquals(new LsnRange(event(4).increment(), range.to(), 7), split.getResidual());

    LsnRangeTracker resumed = new LsnRangeTracker(split.getResidual());
    assertTrue(resumed.tryClaim(event(6)));
    assertEquals(
        new LsnRange(event(6).increment(), range.to(), 8), resumed.trySplit(0).getResidual());
    assertEquals(
        new LsnRange(event(0), event(9).increment(), 0),
        new LsnRangeTracker(LsnRange.closed(event(0), event(9))).trySplit(0).getResidual(),
        "before any claim the residual keeps the range's own first batch");
  }

  @Test
  void checkpointBeforeAnyClaimLeavesTheWholeRangeAsResidual() {
    LsnRange range = LsnRange.closed(event(0), event(9));
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    SplitResult<LsnRange> split = tracker.trySplit(0);
    assertTrue(split.getPrimary().isEmpty());
    assertEquals(range, split.getResidual());
    tracker.checkDone();
  }

  @Test
  void checkpointAfterAFailedClaimLeavesNothingBehind() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(event(0), event(3)));
    assertTrue(tracker.tryClaim(event(3)));
    assertNull(tracker.trySplit(0), "the last LSN was claimed: no residual, never an empty one");
    LsnRangeTracker failed = new LsnRangeTracker(LsnRange.closed(event(0), event(3)));
    assertTrue(failed.tryClaim(event(1)));
    assertFalse(failed.tryClaim(event(5)));
    assertNull(failed.trySplit(0));
  }

  @Test
  void declinesSplitsAwayFromACheckpoint() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(event(0), event(9)));
    assertTrue(tracker.tryClaim(event(1)));
    assertNull(tracker.trySplit(0.5));
    assertEquals(LsnRange.closed(event(0), event(9)), tracker.currentRestriction());
  }

  @Test
  void checkDoneNamesTheUnprocessedInterval() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.closed(event(0), event(3)));
    assertTrue(tracker.tryClaim(event(1)));
    IllegalStateException e = assertThrows(IllegalStateException.class, tracker::checkDone);
    assertEquals(
        "Last attempted LSN was 0x0000002A000001000011 in range [0x0000002A000001000001,"
            + " 0x0000002A000001000032), claiming work in [0x0000002A000001000012,"
            + " 0x0000002A000001000032) was not attempted",
        e.getMessage());
  }

  @Test
  void openRangesAreUnboundedAndCheckpointForever() {
    LsnRangeTracker tracker = new LsnRangeTracker(LsnRange.openFrom(event(0)));
    assertEquals(IsBounded.UNBOUNDED, tracker.isBounded());
    assertTrue(tracker.tryClaim(event(5)));
    SplitResult<LsnRange> split = tracker.trySplit(0);
    assertEquals(LsnRange.openFrom(event(5).increment()).withFirstBatch(1), split.getResidual());
    assertEquals(
        IsBounded.BOUNDED, new LsnRangeTracker(LsnRange.closed(event(0), event(1))).isBounded());
  }

  @Test
  void progressCountsLsnValuesClaimed() {
    LsnRangeTracker tracker = new LsnRangeTracker(new LsnRange(event(0), event(4)));
    Progress before = tracker.getProgress();
    assertEquals(0.0, before.getWorkCompleted());
    assertEquals(64.0, before.getWorkRemaining());
    assertTrue(tracker.tryClaim(event(1)));
    Progress after = tracker.getProgress();
    assertEquals(17.0, after.getWorkCompleted());
    assertEquals(47.0, after.getWorkRemaining());
  }

  @Test
  void rangesAreNeverInverted() {
    assertThrows(IllegalArgumentException.class, () -> new LsnRange(event(2), event(1)));
    assertThrows(IllegalArgumentException.class, () -> LsnRange.closed(event(2), event(1)));
    assertEquals(event(2), LsnRange.closed(event(2), event(2)).lastLsn());
  }
}
