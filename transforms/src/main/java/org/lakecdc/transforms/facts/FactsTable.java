package org.lakecdc.transforms.facts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.SmallFileCompaction;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;

/**
 * The facts table (docs/tables.md "Facts"): one row per batch, batches without rows included, plus
 * event rows ({@code bootstrap}, {@code schema_change}, {@code capture_instance_switched}, {@code
 * data_skipped}, {@code nothing_new}, {@code table_failed}). All times are UTC, stored as
 * TIMESTAMP_NTZ.
 *
 * <p>Columns that the reference measures on SQL Server only ({@code source_rtt_ms}, {@code
 * read_seconds}, {@code read_mb}, {@code network_wait_ms}) are NULL until the SQL Server client
 * measures them; docs/tables.md says so per column.
 */
public final class FactsTable {
  /** Column names, in creation order. */
  public static final String APP_ID = "app_id",
      BATCH_ID = "batch_id",
      ROWS = "rows",
      MIN_LSN = "min_lsn",
      MAX_LSN = "max_lsn",
      MIN_COMMIT_TS = "min_commit_ts",
      MAX_COMMIT_TS = "max_commit_ts",
      DELETES = "deletes",
      INSERTS = "inserts",
      UPDATES = "updates",
      STARTED_AT = "started_at",
      DURATION_MS = "duration_ms",
      SOURCE_RTT_MS = "source_rtt_ms",
      READ_SECONDS = "read_seconds",
      READ_MB = "read_mb",
      NETWORK_WAIT_MS = "network_wait_ms",
      RETENTION_WATERMARK_TS = "retention_watermark_ts",
      RETENTION_HEADROOM_HOURS = "retention_headroom_hours",
      EVENT = "event",
      LOST_FROM_TS = "lost_from_ts",
      LOST_TO_TS = "lost_to_ts",
      SOURCE_MAX_COMMIT_TS = "source_max_commit_ts",
      CAPTURE_LAG_SECONDS = "capture_lag_seconds",
      INGESTION_LAG_SECONDS = "ingestion_lag_seconds",
      END_LSN = "end_lsn",
      END_COMMIT_TS = "end_commit_ts",
      DETAIL = "detail",
      TARGET = "target",
      WRITTEN_AT = "written_at";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Event names. */
  public static final String EVENT_BOOTSTRAP = "bootstrap",
      EVENT_SCHEMA_CHANGE = "schema_change",
      EVENT_CAPTURE_INSTANCE_SWITCHED = "capture_instance_switched",
      EVENT_DATA_SKIPPED = "data_skipped",
      EVENT_NOTHING_NEW = "nothing_new",
      /**
       * A table stopped alone by a failure: {@code detail} is {@code "<ErrorClass>: <message>"},
       * {@code end_lsn} the position it failed at.
       */
      EVENT_TABLE_FAILED = "table_failed";

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          col(APP_ID, OutputType.STRING, "Job (app) id that wrote the row; with batch_id the key"),
          col(BATCH_ID, OutputType.BIGINT, "Batch number; NULL on snapshot event rows"),
          col(
              ROWS,
              OutputType.BIGINT,
              "Change rows written (0 for a batch without rows); snapshot rows for bootstrap;"
                  + " NULL when a snapshot was reused"),
          col(
              MIN_LSN,
              OutputType.STRING,
              "Smallest _start_lsn in the batch; on events the event LSN"),
          col(
              MAX_LSN,
              OutputType.STRING,
              "Largest _start_lsn in the batch; on events the event LSN"),
          col(MIN_COMMIT_TS, OutputType.TIMESTAMP_NTZ, "Earliest commit time in the batch (UTC)"),
          col(MAX_COMMIT_TS, OutputType.TIMESTAMP_NTZ, "Latest commit time in the batch (UTC)"),
          col(DELETES, OutputType.BIGINT, "Rows with _operation 1"),
          col(INSERTS, OutputType.BIGINT, "Rows with _operation 2"),
          col(UPDATES, OutputType.BIGINT, "Rows with _operation 4 (after-images only)"),
          col(STARTED_AT, OutputType.TIMESTAMP_NTZ, "When the job started the batch's run (UTC)"),
          col(
              DURATION_MS,
              OutputType.BIGINT,
              "Milliseconds from started_at to the end of the batch's bronze commit"),
          col(SOURCE_RTT_MS, OutputType.DOUBLE, "Median SELECT 1 round trip, ms (SQL Server only)"),
          col(READ_SECONDS, OutputType.DOUBLE, "Seconds spent reading the batch (SQL Server only)"),
          col(READ_MB, OutputType.DOUBLE, "Megabytes read for the batch (SQL Server only)"),
          col(
              NETWORK_WAIT_MS,
              OutputType.BIGINT,
              "ASYNC_NETWORK_IO wait during the read, ms (SQL Server only)"),
          col(
              RETENTION_WATERMARK_TS,
              OutputType.TIMESTAMP_NTZ,
              "Commit time of the capture instance's min_lsn (the cleanup position), UTC"),
          col(
              RETENTION_HEADROOM_HOURS,
              OutputType.DOUBLE,
              "end_commit_ts - retention_watermark_ts in hours: how far cleanup is behind"),
          col(EVENT, OutputType.STRING, "NULL for a batch; else the event name"),
          col(LOST_FROM_TS, OutputType.TIMESTAMP_NTZ, "data_skipped: start of the lost gap (UTC)"),
          col(LOST_TO_TS, OutputType.TIMESTAMP_NTZ, "data_skipped: end of the lost gap (UTC)"),
          col(
              SOURCE_MAX_COMMIT_TS,
              OutputType.TIMESTAMP_NTZ,
              "Commit time of max_lsn when the batch was committed (capture progress), UTC"),
          col(
              CAPTURE_LAG_SECONDS,
              OutputType.DOUBLE,
              "Job clock minus source_max_commit_ts when measured, seconds"),
          col(
              INGESTION_LAG_SECONDS,
              OutputType.DOUBLE,
              "source_max_commit_ts - end_commit_ts, seconds: how far the batch is behind capture"),
          col(END_LSN, OutputType.STRING, "Batch end LSN (a commit of cdc.lsn_time_mapping)"),
          col(END_COMMIT_TS, OutputType.TIMESTAMP_NTZ, "Commit time of end_lsn (UTC)"),
          col(DETAIL, OutputType.STRING, "Event detail text or JSON"),
          col(TARGET, OutputType.STRING, "The bronze table's path or name"),
          col(WRITTEN_AT, OutputType.TIMESTAMP_NTZ, "When the facts row was written (UTC)"));

  /** The Beam schema of facts rows. */
  public static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private FactsTable() {}

  private static DeltaColumn col(String name, OutputType type, String comment) {
    return DeltaColumn.nullable(name, type, comment);
  }

  /**
   * The table definition: columns with comments, the facts kind's comment, and {@code
   * delta.checkpointInterval = 100} ({@link SmallFileCompaction}).
   */
  public static TableDefinition definition() {
    return new TableDefinition(
        TableKind.FACTS,
        COLUMNS,
        TableKind.FACTS.tableComment(),
        SmallFileCompaction.tableProperties(TableKind.FACTS));
  }

  /**
   * The {@code data_skipped} event row of a gap a batch skipped (docs/behaviour.md §3.8, §4.5):
   * {@code min_lsn = max_lsn = end_lsn} = the capture instance's {@code min_lsn} when the gap was
   * found, {@code end_commit_ts} and {@code lost_to_ts} its commit time (also the {@code
   * retention_watermark_ts}), {@code lost_from_ts} the commit time of the last commit before the
   * gap, {@code detail} {@code {"capture_instance","from","to","certain"[,"reason"]}}, rows 0.
   *
   * @param appId the stream's app id (of its generation)
   * @param batchId the batch that skipped the gap
   * @param target the bronze table's path
   * @param gap the gap
   * @param now when the row is written (UTC)
   */
  public static Row dataSkippedRow(
      String appId,
      long batchId,
      String target,
      org.lakecdc.io.mssqlcdc.read.SkippedRange gap,
      Instant now) {
    return row()
        .set(APP_ID, appId)
        .set(BATCH_ID, batchId)
        .set(ROWS, 0L)
        .set(EVENT, EVENT_DATA_SKIPPED)
        .set(MIN_LSN, gap.to().toString())
        .set(MAX_LSN, gap.to().toString())
        .set(END_LSN, gap.to().toString())
        .set(END_COMMIT_TS, gap.lostTo())
        .set(LOST_FROM_TS, gap.lostFrom())
        .set(LOST_TO_TS, gap.lostTo())
        .set(RETENTION_WATERMARK_TS, gap.lostTo())
        .set(DETAIL, gap.detail())
        .set(TARGET, target)
        .set(WRITTEN_AT, now)
        .build();
  }

  /**
   * The {@code detail} of a facts row as read back (a scan's column map): its JSON object, or null
   * when the row has no detail or it is not a JSON object.
   */
  public static @Nullable JsonNode detail(Map<String, Object> row) {
    if (!(row.get(DETAIL) instanceof String text)) {
      return null;
    }
    try {
      JsonNode node = JSON.readTree(text);
      return node != null && node.isObject() ? node : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  /** A UTC instant as the zone-less date-time stored in TIMESTAMP_NTZ columns. */
  public static @Nullable LocalDateTime utc(@Nullable Instant instant) {
    return instant == null ? null : LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
  }

  /** Builds one facts row; unset columns are NULL. */
  public static Builder row() {
    return new Builder();
  }

  /** A facts row under construction. */
  public static final class Builder {
    private final Map<String, Object> values = new HashMap<>();

    private Builder() {}

    /**
     * Sets a column.
     *
     * @throws IllegalArgumentException for a name that is not a facts column (nothing is written
     *     with an unknown column, C126)
     */
    public Builder set(String column, @Nullable Object value) {
      if (!SCHEMA.hasField(column)) {
        throw new IllegalArgumentException("Unknown facts column '" + column + "'");
      }
      if (value instanceof Instant) {
        value = utc((Instant) value);
      }
      values.put(column, value);
      return this;
    }

    /** The Beam row of the facts schema. */
    public Row build() {
      List<Object> ordered = new ArrayList<>(SCHEMA.getFieldCount());
      for (Schema.Field field : SCHEMA.getFields()) {
        ordered.add(values.get(field.getName()));
      }
      return Row.withSchema(SCHEMA).addValues(ordered).build();
    }
  }
}
