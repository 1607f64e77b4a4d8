package org.lakecdc.transforms.history;

import java.time.LocalDateTime;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One {@link HistoryApplier#apply} call's outcome.
 *
 * @param bronzeFound false when no bronze table exists at the path (nothing was read or written)
 * @param appliedLsn the history's position after the call, or null when nothing was applied
 * @param finalizedUntil the history's verdict after the call (UTC), or null
 * @param waves the history commits this call made (snapshots and waves)
 * @param opened versions opened (snapshot rows included)
 * @param closed versions closed (by a change, a delete or a re-snapshot)
 * @param updatedInPlace changes that touched only untracked columns and rewrote a current version
 * @param historyVersion the history table's Delta version after the call, or -1 when none
 */
public record HistoryResult(
    boolean bronzeFound,
    @Nullable String appliedLsn,
    @Nullable LocalDateTime finalizedUntil,
    int waves,
    long opened,
    long closed,
    long updatedInPlace,
    long historyVersion) {}
