package org.lakecdc.io.mssqlcdc.client;

import java.time.LocalDateTime;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * A capture instance as {@code sys.sp_cdc_help_change_data_capture} describes it.
 *
 * @param name the capture instance name ({@code <schema>_<table>} by default); its change table is
 *     {@code cdc.[<name>_CT]}
 * @param sourceSchema schema of the tracked table
 * @param sourceTable name of the tracked table
 * @param startLsn the instance's start LSN S: from S on every commit of the table is in this
 *     instance; empty when SQL Server has not recorded it
 * @param createDate when the instance was created, server-local time; orders instances of one table
 *     (a later create date is the newer instance)
 * @param keyColumns the columns of the unique index the instance uses ({@code index_column_list}),
 *     in index order; empty when the table has none
 */
public record CaptureInstance(
    String name,
    String sourceSchema,
    String sourceTable,
    Optional<Lsn> startLsn,
    Optional<LocalDateTime> createDate,
    List<String> keyColumns) {
  public CaptureInstance {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(sourceSchema, "sourceSchema");
    Objects.requireNonNull(sourceTable, "sourceTable");
    Objects.requireNonNull(startLsn, "startLsn");
    Objects.requireNonNull(createDate, "createDate");
    keyColumns = List.copyOf(keyColumns);
  }

  /** The change table's name, {@code <name>_CT} in schema {@code cdc}. */
  public String changeTable() {
    return name + "_CT";
  }
}
