package org.lakecdc.transforms.bronze;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.BatchSource;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.SkippedRange;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The facts rows of one batch (docs/tables.md "Facts"): the batch row, then its event rows. Source
 * measurements (retention watermark, capture progress, lags) are taken when the batch is committed,
 * from the capture instance the batch read last.
 */
final class BatchFacts {
  private BatchFacts() {}

  /**
   * The facts rows of {@code batch}, committed after {@code before}: the batch row (its counts, the
   * bronze write's duration, and the source measurements the reader took, {@link
   * ChangeBatch#source()}), then one {@code schema_change} row per DDL in the batch's range, one
   * {@code data_skipped} row per gap of purged changes the batch skipped ({@link
   * FactsTable#dataSkippedRow}), and a {@code capture_instance_switched} row when the batch starts
   * reading a newer capture instance. Calls no source: everything comes with the batch.
   */
  static List<Row> rows(
      DeltaTarget target,
      StreamPosition before,
      ChangeBatch batch,
      BatchStats stats,
      Instant startedAt,
      Duration bronzeDuration,
      Clock clock) {
    BatchSource source = batch.source();
    Instant end = batch.toCommitTime();
    Instant retention = source.retentionWatermark();
    Instant sourceMax = source.sourceMaxCommitTime();
    Instant now = clock.instant();
    Instant sourceNow = source.sourceTime() == null ? now : source.sourceTime();
    List<Row> rows = new ArrayList<>();
    rows.add(
        stats
            .factsRow(target.appId(), batch.toLsn(), end, target.bronzePath())
            .set(FactsTable.STARTED_AT, startedAt)
            .set(FactsTable.DURATION_MS, bronzeDuration.toMillis())
            .set(FactsTable.READ_SECONDS, round(source.readNanos() / 1e9, 3))
            .set(FactsTable.READ_MB, round(source.readBytes() / (1024.0 * 1024.0), 6))
            .set(FactsTable.RETENTION_WATERMARK_TS, retention)
            .set(FactsTable.RETENTION_HEADROOM_HOURS, hours(retention, end))
            .set(FactsTable.SOURCE_MAX_COMMIT_TS, sourceMax)
            .set(FactsTable.CAPTURE_LAG_SECONDS, seconds(sourceMax, sourceNow))
            .set(FactsTable.INGESTION_LAG_SECONDS, seconds(end, sourceMax))
            .set(FactsTable.WRITTEN_AT, now)
            .build());
    for (BatchSource.Ddl ddl : source.ddl()) {
      rows.add(
          FactsTable.row()
              .set(FactsTable.APP_ID, target.appId())
              .set(FactsTable.BATCH_ID, stats.batchId())
              .set(FactsTable.ROWS, 0L)
              .set(FactsTable.EVENT, FactsTable.EVENT_SCHEMA_CHANGE)
              .set(FactsTable.MIN_LSN, ddl.lsn().toString())
              .set(FactsTable.MAX_LSN, ddl.lsn().toString())
              .set(FactsTable.END_LSN, ddl.lsn().toString())
              .set(FactsTable.END_COMMIT_TS, ddl.commitTime())
              .set(FactsTable.DETAIL, truncate(ddl.command(), 500))
              .set(FactsTable.TARGET, target.bronzePath())
              .set(FactsTable.WRITTEN_AT, now)
              .build());
    }
    for (SkippedRange gap : source.skipped()) {
      rows.add(
          FactsTable.dataSkippedRow(
              target.appId(), stats.batchId(), target.bronzePath(), withStart(gap, before), now));
    }
    switchEvent(before, batch)
        .ifPresent(
            e ->
                rows.add(
                    FactsTable.row()
                        .set(FactsTable.APP_ID, target.appId())
                        .set(FactsTable.BATCH_ID, stats.batchId())
                        .set(FactsTable.ROWS, 0L)
                        .set(FactsTable.EVENT, FactsTable.EVENT_CAPTURE_INSTANCE_SWITCHED)
                        .set(FactsTable.MIN_LSN, e.lsn())
                        .set(FactsTable.MAX_LSN, e.lsn())
                        .set(FactsTable.END_LSN, e.lsn())
                        .set(FactsTable.END_COMMIT_TS, e.commitTime())
                        .set(FactsTable.DETAIL, e.detail())
                        .set(FactsTable.TARGET, target.bronzePath())
                        .set(FactsTable.WRITTEN_AT, now)
                        .build()));
    return rows;
  }

  /**
   * {@code gap} with its {@code lost_from_ts} taken from the position before the batch when the
   * reader could not read it (cleanup also removed the {@code cdc.lsn_time_mapping} row of the last
   * processed commit) and the gap starts right after that position: the changes committed after it
   * are the ones lost (docs/behaviour.md §3.8).
   */
  static SkippedRange withStart(SkippedRange gap, StreamPosition before) {
    if (gap.lostFrom() != null
        || before.endCommitTime() == null
        || !gap.from().equals(before.endLsn().increment())) {
      return gap;
    }
    return new SkippedRange(
        gap.captureInstance(),
        gap.from(),
        gap.to(),
        before.endCommitTime(),
        gap.lostTo(),
        gap.certain(),
        gap.reason());
  }

  private static @Nullable Double round(double value, int scale) {
    return BigDecimal.valueOf(value).setScale(scale, RoundingMode.HALF_UP).doubleValue();
  }

  private static String truncate(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max);
  }

  /** {@code capture_lag_seconds} of a batch row, if measured. */
  static Optional<Double> captureLagSeconds(Row batchRow) {
    return Optional.ofNullable(batchRow.getDouble(FactsTable.CAPTURE_LAG_SECONDS));
  }

  private record SwitchEvent(String lsn, @Nullable Instant commitTime, String detail) {}

  /**
   * A {@code capture_instance_switched} event when the batch starts reading a newer capture
   * instance: it crossed the newer instance's start LSN S, or it is the first batch to read the
   * newer instance after the previous batch (of this or an earlier run) read the older one. Its
   * detail is {@code "<older> -> <newer>"}, plus {@code "; no longer captured, read as NULL: c1,
   * c2"} for the columns the query reads that the newer instance does not capture
   * (docs/sql-server.md "Switching to a new capture instance"; docs/behaviour.md §3.6; C033).
   */
  private static Optional<SwitchEvent> switchEvent(StreamPosition before, ChangeBatch batch) {
    List<String> read = batch.readInstances();
    String older;
    String newer;
    if (read.size() > 1) {
      older = read.get(0);
      newer = read.get(read.size() - 1);
    } else if (!before.captureInstance().isEmpty()
        && !before.captureInstance().equalsIgnoreCase(read.get(0))) {
      older = before.captureInstance();
      newer = read.get(0);
    } else {
      return Optional.empty();
    }
    Lsn start = batch.fromLsn();
    Instant time = null;
    List<String> lost = List.of();
    for (BatchSource.InstanceRead instance : batch.source().instances()) {
      if (instance.name().equalsIgnoreCase(newer)) {
        if (instance.startLsn() != null) {
          start = instance.startLsn();
          time = instance.startCommitTime();
        }
        lost = instance.notCaptured();
      }
    }
    return Optional.of(new SwitchEvent(start.toString(), time, switchDetail(older, newer, lost)));
  }

  /**
   * {@code "<older> -> <newer>"}, plus {@code "; no longer captured, read as NULL: c1, c2"} naming,
   * in query order, the read columns the newer instance does not capture.
   */
  static String switchDetail(String older, String newer, List<String> notCaptured) {
    String detail = older + " -> " + newer;
    return notCaptured.isEmpty()
        ? detail
        : detail + "; no longer captured, read as NULL: " + String.join(", ", notCaptured);
  }

  /**
   * The captured columns a query with this change schema reads: its fields other than the metadata
   * and bronze columns, in order.
   */
  static List<String> readColumns(org.apache.beam.sdk.schemas.Schema changeSchema) {
    List<String> columns = new ArrayList<>();
    for (org.apache.beam.sdk.schemas.Schema.Field field : changeSchema.getFields()) {
      if (!MetadataColumns.isReserved(field.getName())) {
        columns.add(field.getName());
      }
    }
    return columns;
  }

  private static @Nullable Double hours(@Nullable Instant from, @Nullable Instant to) {
    if (from == null || to == null) {
      return null;
    }
    return BigDecimal.valueOf(Duration.between(from, to).toMillis())
        .divide(BigDecimal.valueOf(3_600_000), 2, RoundingMode.HALF_UP)
        .doubleValue();
  }

  private static @Nullable Double seconds(@Nullable Instant from, @Nullable Instant to) {
    if (from == null || to == null) {
      return null;
    }
    return BigDecimal.valueOf(Duration.between(from, to).toMillis())
        .divide(BigDecimal.valueOf(1000), 3, RoundingMode.HALF_UP)
        .doubleValue();
  }
}
