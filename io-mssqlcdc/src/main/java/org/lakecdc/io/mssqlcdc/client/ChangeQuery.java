package org.lakecdc.io.mssqlcdc.client;

import java.util.List;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * What to read from one change table: the rows of {@code cdc.[<captureInstance>_CT]} with {@code
 * fromLsn <= __$start_lsn <= toLsn} (both ends inclusive, as the T-SQL {@code BETWEEN}), ordered by
 * {@code __$start_lsn, __$command_id, __$seqval, __$operation}.
 *
 * @param captureInstance the capture instance
 * @param fromLsn first commit LSN to read, inclusive
 * @param toLsn last commit LSN to read, inclusive
 * @param columns captured columns to return, in this order; a column the instance does not capture
 *     reads NULL
 * @param includeCommandId whether to read {@code __$command_id}
 */
public record ChangeQuery(
    String captureInstance,
    Lsn fromLsn,
    Lsn toLsn,
    List<String> columns,
    boolean includeCommandId) {
  public ChangeQuery {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(fromLsn, "fromLsn");
    Objects.requireNonNull(toLsn, "toLsn");
    columns = List.copyOf(columns);
  }
}
