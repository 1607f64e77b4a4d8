package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * What the reading stage saw of the source while it read one batch: everything a sink needs to
 * describe the batch (its facts row and events, docs/tables.md "Facts") without calling SQL Server
 * again. Measured by the reader, after the batch's rows were read.
 *
 * @param retentionWatermark UTC commit time of the last read capture instance's {@code min_lsn}
 *     (the last commit at or before it): the oldest change CDC cleanup has kept; null when unknown
 * @param sourceMaxCommitTime UTC commit time of {@code sys.fn_cdc_get_max_lsn()} read after the
 *     batch's rows; null when CDC has no commit
 * @param sourceTime the server's clock in UTC when the batch was read, or null when the client has
 *     none (the simulator without a clock)
 * @param readNanos nanoseconds spent fetching the batch's change rows from the source (the queries
 *     and the row iteration; not the sink's writing)
 * @param readBytes approximate size of the change rows read, in bytes: per value its UTF-8 length
 *     (text), its length (binary) or 8 (numbers, dates and times), 16 (decimals); NULL counts 0
 * @param ddl DDL on the table after the previous batch's end up to this batch's end ({@code
 *     sys.sp_cdc_get_ddl_history} of every capture instance of the table, one per LSN), LSN order
 * @param instances one entry per capture instance the batch read, oldest first
 * @param skipped the changes of the batch's range CDC cleanup had purged, which a read with {@link
 *     DataLossPolicy#SKIP} skipped (certain, found before the read) or may have missed (possible,
 *     found after it); empty otherwise
 */
public record BatchSource(
    @Nullable Instant retentionWatermark,
    @Nullable Instant sourceMaxCommitTime,
    @Nullable Instant sourceTime,
    long readNanos,
    long readBytes,
    List<Ddl> ddl,
    List<InstanceRead> instances,
    List<SkippedRange> skipped)
    implements Serializable {
  public BatchSource {
    ddl = List.copyOf(ddl);
    instances = List.copyOf(instances);
    skipped = List.copyOf(skipped);
  }

  /** What the reader measured of a batch that skipped nothing. */
  public BatchSource(
      @Nullable Instant retentionWatermark,
      @Nullable Instant sourceMaxCommitTime,
      @Nullable Instant sourceTime,
      long readNanos,
      long readBytes,
      List<Ddl> ddl,
      List<InstanceRead> instances) {
    this(
        retentionWatermark,
        sourceMaxCommitTime,
        sourceTime,
        readNanos,
        readBytes,
        ddl,
        instances,
        List.of());
  }

  /** Nothing measured: for batches made outside a reader (tests, tools). */
  public static final BatchSource NONE =
      new BatchSource(null, null, null, 0, 0, List.of(), List.of(), List.of());

  /**
   * One DDL statement of {@code sys.sp_cdc_get_ddl_history}.
   *
   * @param lsn its {@code ddl_lsn}
   * @param commitTime UTC commit time of the last commit at or before {@code lsn}, or null
   * @param command its {@code ddl_command} text
   */
  public record Ddl(Lsn lsn, @Nullable Instant commitTime, String command) implements Serializable {
    public Ddl {
      Objects.requireNonNull(lsn, "lsn");
      Objects.requireNonNull(command, "command");
    }
  }

  /**
   * A capture instance a batch read.
   *
   * @param name the capture instance
   * @param startLsn its start LSN ({@code cdc.change_tables.start_lsn}) when the batch was read, or
   *     null when unknown
   * @param startCommitTime UTC commit time of the last commit at or before {@code startLsn}, or
   *     null
   * @param notCaptured the columns the read reads that this instance does not capture (read as
   *     NULL), in the read's order
   */
  public record InstanceRead(
      String name,
      @Nullable Lsn startLsn,
      @Nullable Instant startCommitTime,
      List<String> notCaptured)
      implements Serializable {
    public InstanceRead {
      Objects.requireNonNull(name, "name");
      notCaptured = List.copyOf(notCaptured);
    }
  }
}
