package org.lakecdc.transforms.silver;

import java.time.LocalDateTime;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One {@link SilverApplier#apply} call's outcome (docs/behaviour.md §10.2 step 17).
 *
 * @param rebuilt true when the call rebuilt silver and merged something (a newer snapshot, or the
 *     first call that finds bronze rows to apply)
 * @param appliedLsn silver's position after the call: the highest bronze LSN applied ({@code 0x} +
 *     20 upper-case hex digits), or null when nothing was ever applied
 * @param finalizedUntil silver's verdict after the call (UTC), or null when it has none
 * @param bronzeFound false when no bronze table exists at the path (nothing was read or written)
 * @param waves the silver commits this call made (rebuilds and waves)
 * @param bronzeRowsRead the bronze rows applied: the snapshot rows of a rebuild plus the change
 *     rows of every wave (rows read again for a hash partition counted once per partition read)
 * @param keysApplied the latest images merged, summed over the waves (snapshot rows included)
 * @param silverVersion silver's Delta version after the call, or -1 when there is no silver table
 */
public record ApplyResult(
    boolean rebuilt,
    @Nullable String appliedLsn,
    @Nullable LocalDateTime finalizedUntil,
    boolean bronzeFound,
    int waves,
    long bronzeRowsRead,
    long keysApplied,
    long silverVersion) {}
