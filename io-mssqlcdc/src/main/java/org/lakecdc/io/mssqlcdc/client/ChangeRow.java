package org.lakecdc.io.mssqlcdc.client;

import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * One row of a change table {@code cdc.[<ci>_CT]} joined to {@code cdc.lsn_time_mapping}.
 *
 * <p>Values of captured columns are in the order the query asked for them, as Java values by SQL
 * Server type: {@code bit} Boolean; {@code tinyint}, {@code smallint} Short; {@code int} Integer;
 * {@code bigint} Long; {@code real} Float; {@code float} Double; {@code decimal}, {@code numeric},
 * {@code money}, {@code smallmoney} BigDecimal; {@code date} LocalDate; {@code datetime}, {@code
 * datetime2}, {@code smalldatetime} LocalDateTime (as stored, no zone); {@code datetimeoffset}
 * Instant (UTC); {@code time} and every character type String ({@code uniqueidentifier} in its
 * canonical upper-case text); binary types byte[]. NULL where the row holds NULL, where CDC stores
 * no value (computed columns, LOB before-images) and for a requested column the instance does not
 * capture.
 *
 * @param startLsn {@code __$start_lsn}, the commit LSN shared by every row of a transaction
 * @param seqval {@code __$seqval}, increasing within a transaction; shared by an update's two rows
 * @param operation {@code __$operation}: 1 delete, 2 insert, 3 update before-image, 4 update
 *     after-image
 * @param commandId {@code __$command_id}, numbered per capture instance; null when not read
 * @param commitTime UTC commit time of {@code startLsn}
 * @param values captured column values, in the requested order
 */
public record ChangeRow(
    Lsn startLsn,
    Lsn seqval,
    int operation,
    Integer commandId,
    Instant commitTime,
    List<Object> values) {
  public ChangeRow {
    Objects.requireNonNull(startLsn, "startLsn");
    Objects.requireNonNull(seqval, "seqval");
    Objects.requireNonNull(commitTime, "commitTime");
    values = Collections.unmodifiableList(values);
  }
}
