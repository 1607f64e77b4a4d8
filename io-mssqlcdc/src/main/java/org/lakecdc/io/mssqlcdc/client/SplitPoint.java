package org.lakecdc.io.mssqlcdc.client;

import java.util.Objects;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * One tile of a change table's rows in an LSN range, as the {@code NTILE} split query returns it
 * (docs/architecture.md "Data flow"): the tile's last commit LSN, the LSN right after it, and its
 * change rows. A commit straddling two tiles stays whole in the first, so {@code bound} is always a
 * commit LSN and tiles can share a bound.
 *
 * @param bound {@code MAX(__$start_lsn)} of the tile
 * @param next {@code sys.fn_cdc_increment_lsn(bound)}
 * @param rows change rows in the tile
 */
public record SplitPoint(Lsn bound, Lsn next, long rows) {
  public SplitPoint {
    Objects.requireNonNull(bound, "bound");
    Objects.requireNonNull(next, "next");
  }
}
