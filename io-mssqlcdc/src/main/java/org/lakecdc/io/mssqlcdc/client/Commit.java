package org.lakecdc.io.mssqlcdc.client;

import java.time.Instant;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * One row of {@code cdc.lsn_time_mapping}: a commit LSN (a transaction's commit, or an idle "dummy"
 * entry capture writes with no change rows) and its commit time converted to UTC.
 *
 * @param lsn the commit LSN ({@code start_lsn})
 * @param commitTime {@code tran_end_time} converted from the server's zone to UTC
 *     (docs/sql-server.md "Connection settings"), millisecond precision
 */
public record Commit(Lsn lsn, Instant commitTime) {
  public Commit {
    Objects.requireNonNull(lsn, "lsn");
    Objects.requireNonNull(commitTime, "commitTime");
  }
}
