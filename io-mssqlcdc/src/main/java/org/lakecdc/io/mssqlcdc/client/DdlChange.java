package org.lakecdc.io.mssqlcdc.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * One row of {@code sys.sp_cdc_get_ddl_history}: a DDL statement on a tracked table.
 *
 * @param captureInstance the instance whose history recorded it
 * @param lsn the DDL's LSN ({@code ddl_lsn}); DDL takes an LSN but no {@code cdc.lsn_time_mapping}
 *     row
 * @param commitTime the UTC commit time of the last commit at or before {@code lsn}; empty when
 *     there is none
 * @param command the DDL text ({@code ddl_command})
 */
public record DdlChange(
    String captureInstance, Lsn lsn, Optional<Instant> commitTime, String command) {
  public DdlChange {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(lsn, "lsn");
    Objects.requireNonNull(commitTime, "commitTime");
    Objects.requireNonNull(command, "command");
  }
}
