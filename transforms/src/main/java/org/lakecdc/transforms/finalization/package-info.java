/**
 * The completeness verdict: public API.
 *
 * <p>{@link org.lakecdc.transforms.finalization.Finalization} decides up to which time (UTC, in
 * periods of a {@link org.lakecdc.transforms.finalization.Granularity}) a target table holds every
 * change, and {@link org.lakecdc.transforms.finalization.ControlTable} is the control table {@code
 * table_finalization} that records it, one row per target. docs/tables.md, "Control", describes the
 * table and the meaning of {@code finalized_until}.
 */
package org.lakecdc.transforms.finalization;
