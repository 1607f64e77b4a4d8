package org.lakecdc.io.mssqlcdc.lsn;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.util.Objects;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.transforms.splittabledofn.SplitResult;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The {@link RestrictionTracker} of an {@link LsnRange}: claims commit LSNs in increasing order.
 *
 * <p>Claiming LSN {@code p} claims every LSN after the last claimed one up to and including {@code
 * p}: the reader claims the end commit of a batch (a row of {@code cdc.lsn_time_mapping}) before it
 * reads the batch's change rows, so a batch always ends on a commit boundary and never inside a
 * transaction. A claim at or past {@code to} fails, and the reader stops.
 *
 * <p>Splitting: only checkpoints ({@code trySplit(0)}) are taken, at the LSN right after the last
 * claimed commit, so the primary holds exactly what was claimed and the residual resumes exactly
 * after it. A split with a fraction above zero is declined ({@code null}): this tracker cannot see
 * {@code cdc.lsn_time_mapping}, so it cannot pick a commit boundary; commit-aligned splits are made
 * up front by the reader's {@code @SplitRestriction} (at split points balanced by change rows and
 * at a newer capture instance's start LSN). When nothing remains, no residual is returned, so a
 * residual is never empty. Before any claim, the primary of a checkpoint is the empty range at
 * {@code from} (it holds no work) and the residual is the whole range.
 *
 * <p>Each successful claim is one batch: the residual's {@link LsnRange#firstBatch()} is the
 * primary's plus the claims made, so batch numbers continue across checkpoints.
 *
 * <p>Progress is measured in LSN values (an 80-bit distance), which only orders work; the reader's
 * size estimate in change rows comes from the database.
 */
public class LsnRangeTracker extends RestrictionTracker<LsnRange, Lsn>
    implements RestrictionTracker.HasProgress {
  private LsnRange range;
  private @Nullable Lsn lastAttempted;
  private @Nullable Lsn lastClaimed;
  private long claims;

  public LsnRangeTracker(LsnRange range) {
    this.range = Objects.requireNonNull(range, "range");
  }

  /**
   * Claims every LSN up to and including {@code position}.
   *
   * @return false when {@code position} is at or past the end of the range (the reader must stop)
   * @throws IllegalArgumentException when {@code position} is not after the last attempted claim or
   *     is before the start of the range
   */
  @Override
  public boolean tryClaim(Lsn position) {
    Objects.requireNonNull(position, "position");
    if (lastAttempted != null && !position.isAfter(lastAttempted)) {
      throw new IllegalArgumentException(
          "Trying to claim LSN "
              + position
              + " while last attempted was "
              + lastAttempted
              + ": claims must increase");
    }
    if (position.isBefore(range.from())) {
      throw new IllegalArgumentException(
          "Trying to claim LSN " + position + " before the start of the range " + range);
    }
    lastAttempted = position;
    if (!position.isBefore(range.to())) {
      return false;
    }
    lastClaimed = position;
    claims++;
    return true;
  }

  @Override
  public LsnRange currentRestriction() {
    return range;
  }

  /** The last successfully claimed LSN, or null before the first claim. */
  public @Nullable Lsn lastClaimed() {
    return lastClaimed;
  }

  @Override
  public @Nullable SplitResult<LsnRange> trySplit(double fractionOfRemainder) {
    if (fractionOfRemainder != 0) {
      return null;
    }
    Lsn splitAt;
    if (lastAttempted == null) {
      splitAt = range.from();
    } else if (lastAttempted.equals(Lsn.MAX)) {
      return null;
    } else {
      splitAt = lastAttempted.increment();
    }
    if (!splitAt.isBefore(range.to())) {
      return null;
    }
    LsnRange primary = new LsnRange(range.from(), splitAt, range.firstBatch());
    LsnRange residual = new LsnRange(splitAt, range.to(), range.firstBatch() + claims);
    range = primary;
    return SplitResult.of(primary, residual);
  }

  /**
   * Passes when every LSN of the range was claimed or attempted.
   *
   * @throws IllegalStateException naming the unprocessed interval otherwise
   */
  @Override
  public void checkDone() throws IllegalStateException {
    if (range.isEmpty()) {
      return;
    }
    Lsn last = range.lastLsn();
    if (lastAttempted == null || lastAttempted.isBefore(last)) {
      throw new IllegalStateException(
          "Last attempted LSN was "
              + lastAttempted
              + " in range "
              + range
              + ", claiming work in ["
              + (lastAttempted == null ? range.from() : lastAttempted.increment())
              + ", "
              + range.to()
              + ") was not attempted");
    }
  }

  @Override
  public IsBounded isBounded() {
    return range.isOpen() ? IsBounded.UNBOUNDED : IsBounded.BOUNDED;
  }

  @Override
  public Progress getProgress() {
    BigInteger total = range.width();
    BigInteger done =
        lastAttempted == null
            ? BigInteger.ZERO
            : lastAttempted
                .toBigInteger()
                .add(BigInteger.ONE)
                .subtract(range.from().toBigInteger());
    if (done.compareTo(total) > 0) {
      done = total;
    }
    BigDecimal doneWork = new BigDecimal(done);
    BigDecimal remaining = new BigDecimal(total.subtract(done));
    return Progress.from(
        doneWork.round(MathContext.DECIMAL64).doubleValue(),
        remaining.round(MathContext.DECIMAL64).doubleValue());
  }

  @Override
  public String toString() {
    return "LsnRangeTracker{range="
        + range
        + ", lastAttempted="
        + lastAttempted
        + ", lastClaimed="
        + lastClaimed
        + "}";
  }
}
