package org.lakecdc.transforms.reconcile;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;

/**
 * The reconcile report table (kind {@code reconcile}, docs/behaviour.md §11.3, docs/tables.md
 * "Reconcile"): per run ({@code run_id}) one row per bucket, one per differing key and one per
 * chunk failure, appended in one commit per run (transaction app id {@code lakecdc-reconcile-<run
 * id>}, version 0, so a replayed commit is skipped). Times are UTC, stored as TIMESTAMP_NTZ.
 *
 * <p>Row kinds: bucket rows ({@code status}, counts, sums, {@code hashed}, {@code source_lsn} set;
 * {@code key} NULL); key rows ({@code key}, {@code failure_type}, {@code detail}, {@code
 * source_lsn} and the bucket's bounds set); chunk rows ({@code failure_type} {@code CHUNK_*},
 * {@code detail}, the chunk's bounds, {@code source_lsn} NULL; {@link ChunkChecks}).
 */
public final class ReconcileReport {
  /** Column names, in creation order. */
  public static final String RUN_ID = "run_id",
      RUN_AT = "run_at",
      SILVER = "silver",
      SILVER_VERSION = "silver_version",
      SILVER_LSN = "silver_lsn",
      SOURCE_LSN = "source_lsn",
      BUCKET_LO = "bucket_lo",
      BUCKET_HI = "bucket_hi",
      SOURCE_ROWS = "source_rows",
      SOURCE_KEY_SUM = "source_key_sum",
      SILVER_ROWS = "silver_rows",
      SILVER_KEY_SUM = "silver_key_sum",
      STATUS = "status",
      HASHED = "hashed",
      KEY = "key",
      FAILURE_TYPE = "failure_type",
      DETAIL = "detail";

  /** Failure types of key rows and chunk rows. */
  public static final String MISSING_TARGET = "MISSING_TARGET",
      MISSING_SOURCE = "MISSING_SOURCE",
      RECORD_DIFF = "RECORD_DIFF",
      IN_FLIGHT = "IN_FLIGHT",
      CHUNK_TILING = "CHUNK_TILING",
      CHUNK_ROWS = "CHUNK_ROWS",
      CHUNK_STAMP = "CHUNK_STAMP";

  /** The app id prefix of report commits; the run id follows. */
  public static final String APP_ID_PREFIX = "lakecdc-reconcile-";

  private static final OutputType KEY_SUM = OutputType.decimal(38, 0);

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required(RUN_ID, OutputType.STRING, "Run id (UUID); groups a run's rows"),
          DeltaColumn.required(RUN_AT, OutputType.TIMESTAMP_NTZ, "Run start (UTC)"),
          DeltaColumn.required(SILVER, OutputType.STRING, "Silver table compared (path or URI)"),
          DeltaColumn.required(
              SILVER_VERSION, OutputType.BIGINT, "Silver's Delta version compared"),
          DeltaColumn.nullable(
              SILVER_LSN,
              OutputType.STRING,
              "Silver's applied_lsn recorded in that version; NULL before any apply"),
          DeltaColumn.nullable(
              SOURCE_LSN,
              OutputType.STRING,
              "max_lsn read just before the source was read (bucket rows: before the counts; key"
                  + " rows: before the rows); NULL on chunk rows"),
          DeltaColumn.nullable(
              BUCKET_LO,
              OutputType.STRING,
              "Bucket's first key (inclusive) as JSON; NULL = open; chunk rows: chunk's first key"),
          DeltaColumn.nullable(
              BUCKET_HI,
              OutputType.STRING,
              "Key the bucket ends before (exclusive) as JSON; NULL = open"),
          DeltaColumn.nullable(SOURCE_ROWS, OutputType.BIGINT, "Bucket rows in the source"),
          DeltaColumn.nullable(
              SOURCE_KEY_SUM,
              KEY_SUM,
              "Sum of key ordinals in the source; NULL for a whole-table count"),
          DeltaColumn.nullable(SILVER_ROWS, OutputType.BIGINT, "Bucket rows in silver"),
          DeltaColumn.nullable(SILVER_KEY_SUM, KEY_SUM, "Sum of key ordinals in silver"),
          DeltaColumn.nullable(
              STATUS,
              OutputType.STRING,
              "Bucket rows: MATCH, IN_FLIGHT or MISMATCH; NULL on key and chunk rows"),
          DeltaColumn.nullable(HASHED, OutputType.BOOLEAN, "Bucket rows: compared row by row"),
          DeltaColumn.nullable(
              KEY, OutputType.STRING, "Key rows: the key as a compact JSON object ({\"id\":3})"),
          DeltaColumn.nullable(
              FAILURE_TYPE,
              OutputType.STRING,
              "Key rows: MISSING_TARGET, MISSING_SOURCE, RECORD_DIFF, IN_FLIGHT; chunk rows:"
                  + " CHUNK_TILING, CHUNK_ROWS, CHUNK_STAMP"),
          DeltaColumn.nullable(
              DETAIL,
              OutputType.STRING,
              "Key rows: JSON {silver_start_lsn, columns}; chunk rows: JSON with snapshot, the chunk"
                  + " and what was found"));

  /** The report's row schema. */
  public static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private ReconcileReport() {}

  /** The report table's definition (kind {@link TableKind#RECONCILE}). */
  public static TableDefinition definition() {
    return TableDefinition.of(TableKind.RECONCILE, COLUMNS);
  }

  /**
   * What every row of a run shares.
   *
   * @param runId the run's UUID
   * @param runAt the run's start (UTC)
   * @param silver the silver table's path
   * @param silverVersion the Delta version compared
   * @param silverLsn silver's applied_lsn at that version, or null
   * @param sourceLsn the max_lsn read before the source was read, or null
   */
  public record Run(
      String runId,
      LocalDateTime runAt,
      String silver,
      long silverVersion,
      @Nullable String silverLsn,
      @Nullable String sourceLsn)
      implements java.io.Serializable {}

  /**
   * A bucket row.
   *
   * @param run the run
   * @param bucket the bucket (statuses from its counts and {@link Bucket#moved})
   * @param ordinal the key's ordinal (for the bounds' JSON), or null for the whole table
   * @param hashed whether the bucket was compared row by row
   * @return the row
   */
  public static Row bucketRow(
      Run run, Bucket bucket, @Nullable KeyOrdinal ordinal, boolean hashed) {
    return row(
        run,
        run.sourceLsn(),
        lo(bucket, ordinal),
        hi(bucket, ordinal),
        bucket.source().rows(),
        decimal(bucket.sourceKeySum()),
        bucket.silver().rows(),
        decimal(bucket.silverKeySum()),
        bucket.status().name(),
        hashed,
        null,
        null,
        null);
  }

  /** A key row of {@code diff}. */
  public static Row keyRow(Run run, KeyDiff diff) {
    return row(
        run,
        run.sourceLsn(),
        diff.bucketLo(),
        diff.bucketHi(),
        null,
        null,
        null,
        null,
        null,
        null,
        diff.key(),
        diff.failureType(),
        diff.detailJson());
  }

  /** A chunk row of {@code failure}: its bounds, failure type and detail; no source LSN. */
  public static Row chunkRow(Run run, ChunkChecks.Failure failure) {
    return row(
        run,
        null,
        failure.lo(),
        failure.hi(),
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        failure.failureType(),
        failure.detailJson());
  }

  /** The bucket's first key as JSON, or null when open. */
  public static @Nullable String lo(Bucket bucket, @Nullable KeyOrdinal ordinal) {
    return bucket.lo() == null || ordinal == null ? null : ordinal.boundJson(bucket.lo());
  }

  /** The key the bucket ends before as JSON, or null when open. */
  public static @Nullable String hi(Bucket bucket, @Nullable KeyOrdinal ordinal) {
    return bucket.hi() == null || ordinal == null ? null : ordinal.boundJson(bucket.hi());
  }

  private static @Nullable BigDecimal decimal(java.math.@Nullable BigInteger v) {
    return v == null ? null : new BigDecimal(v);
  }

  private static Row row(
      Run run,
      @Nullable String sourceLsn,
      @Nullable String lo,
      @Nullable String hi,
      @Nullable Long sourceRows,
      @Nullable BigDecimal sourceKeySum,
      @Nullable Long silverRows,
      @Nullable BigDecimal silverKeySum,
      @Nullable String status,
      @Nullable Boolean hashed,
      @Nullable String key,
      @Nullable String failureType,
      @Nullable String detail) {
    return Row.withSchema(SCHEMA)
        .addValues(
            run.runId(),
            run.runAt(),
            run.silver(),
            run.silverVersion(),
            run.silverLsn(),
            sourceLsn,
            lo,
            hi,
            sourceRows,
            sourceKeySum,
            silverRows,
            silverKeySum,
            status,
            hashed,
            key,
            failureType,
            detail)
        .build();
  }

  /**
   * Appends a run's rows in one commit (creating the table first when absent); a replay of the same
   * run commits nothing.
   *
   * @param tables the Delta access
   * @param path the report table's path or URI
   * @param runId the run id
   * @param rows the run's rows
   * @return the report table's version after the commit
   */
  public static long append(DeltaTables tables, String path, String runId, List<Row> rows) {
    tables.createIfAbsent(path, definition());
    return tables.append(path, SCHEMA, rows, APP_ID_PREFIX + runId, 0, Map.of()).version();
  }

  /**
   * A run's rows read back, in no particular order (only the files whose {@code run_id} statistics
   * may hold the run are read).
   *
   * @param tables the Delta access
   * @param path the report table's path or URI
   * @param runId the run id
   * @return the rows as column name to value
   */
  public static List<Map<String, Object>> read(DeltaTables tables, String path, String runId) {
    List<Map<String, Object>> out = new ArrayList<>();
    io.delta.kernel.expressions.Predicate filter =
        new io.delta.kernel.expressions.Predicate(
            "=",
            new io.delta.kernel.expressions.Column(RUN_ID),
            io.delta.kernel.expressions.Literal.ofString(runId));
    try (io.delta.kernel.utils.CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(path, tables.version(path), filter)) {
      while (rows.hasNext()) {
        Map<String, Object> r = rows.next();
        if (runId.equals(r.get(RUN_ID))) {
          out.add(r);
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("Cannot read Delta table " + path, e);
    }
    return out;
  }
}
