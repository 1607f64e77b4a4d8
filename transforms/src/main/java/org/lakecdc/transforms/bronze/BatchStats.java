package org.lakecdc.transforms.bronze;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.SkippedRange;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * What one batch's change rows hold: counts by operation and the smallest and largest commit LSN
 * and time. The facts row of the batch is made of it; a copy is stored with the bronze commit (the
 * {@value #BRONZE_DOMAIN} domain) so a run that stopped between the bronze and the facts commit
 * writes the missing facts row from it.
 *
 * @param batchId the batch number
 * @param rows change rows
 * @param minLsn smallest {@code _start_lsn}, null without rows
 * @param maxLsn largest {@code _start_lsn}, null without rows
 * @param minCommitTs earliest {@code _commit_ts} (UTC), null without rows
 * @param maxCommitTs latest {@code _commit_ts} (UTC), null without rows
 * @param deletes rows with operation 1
 * @param inserts rows with operation 2
 * @param updates rows with operation 4
 */
public record BatchStats(
    long batchId,
    long rows,
    @Nullable String minLsn,
    @Nullable String maxLsn,
    @Nullable Instant minCommitTs,
    @Nullable Instant maxCommitTs,
    long deletes,
    long inserts,
    long updates)
    implements Serializable {
  /** Domain of the last batch's stats in the bronze table. */
  public static final String BRONZE_DOMAIN = "mssql_cdc.batch";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The stats of a batch without rows. */
  public static BatchStats empty(long batchId) {
    return new BatchStats(batchId, 0, null, null, null, null, 0, 0, 0);
  }

  /** Counts {@code changes} (rows of the change schema). */
  public static BatchStats of(long batchId, Iterable<Row> changes) {
    Counter counter = new Counter(batchId);
    changes.forEach(counter::add);
    return counter.stats();
  }

  /**
   * Counts rows one at a time, so a batch's rows are read once: a runner may hand a grouped batch
   * as an iterable that can be read only once (the FlinkRunner does, by default).
   */
  public static final class Counter {
    private final long batchId;
    private long rows, deletes, inserts, updates;
    private @Nullable String minLsn, maxLsn;
    private @Nullable LocalDateTime minTs, maxTs;

    /** The schema of the rows counted last, and the fields read, looked up once per schema. */
    private org.apache.beam.sdk.schemas.@Nullable Schema schema;

    private int lsnField, tsField, operationField;

    /**
     * The last row's {@code _start_lsn} (the instance: the rows of one commit share it) and {@code
     * _commit_ts} (the value), so that the comparisons are made once per commit, not once per row.
     */
    private @Nullable String lastLsn;

    private @Nullable LocalDateTime lastTs;

    /** A counter of batch {@code batchId}'s rows. */
    public Counter(long batchId) {
      this.batchId = batchId;
    }

    /** Counts one change row. */
    public void add(Row row) {
      rows++;
      if (row.getSchema() != schema) {
        schema = row.getSchema();
        lsnField = schema.indexOf(MetadataColumns.START_LSN);
        tsField = schema.indexOf(MetadataColumns.COMMIT_TS);
        operationField = schema.indexOf(MetadataColumns.OPERATION);
      }
      String lsn = row.getString(lsnField);
      LocalDateTime ts = row.getLogicalTypeValue(tsField, LocalDateTime.class);
      if (lsn != lastLsn || rows == 1) {
        lastLsn = lsn;
        if (minLsn == null || lsn.compareTo(minLsn) < 0) {
          minLsn = lsn;
        }
        if (maxLsn == null || lsn.compareTo(maxLsn) > 0) {
          maxLsn = lsn;
        }
      }
      if (rows == 1 || !ts.equals(lastTs)) {
        lastTs = ts;
        if (minTs == null || ts.isBefore(minTs)) {
          minTs = ts;
        }
        if (maxTs == null || ts.isAfter(maxTs)) {
          maxTs = ts;
        }
      }
      switch (row.getInt32(operationField)) {
        case MetadataColumns.OP_DELETE -> deletes++;
        case MetadataColumns.OP_INSERT -> inserts++;
        case MetadataColumns.OP_UPDATE_AFTER -> updates++;
        default -> {}
      }
    }

    /** The stats of the rows counted so far. */
    public BatchStats stats() {
      return new BatchStats(
          batchId,
          rows,
          minLsn,
          maxLsn,
          minTs == null ? null : minTs.toInstant(ZoneOffset.UTC),
          maxTs == null ? null : maxTs.toInstant(ZoneOffset.UTC),
          deletes,
          inserts,
          updates);
    }
  }

  /**
   * A facts row of this batch with the columns the stats determine: app id, batch id, rows, LSN and
   * commit-time bounds, counts by operation, the end and the target. Measurements are added by the
   * caller.
   */
  public FactsTable.Builder factsRow(
      String appId, Lsn endLsn, @Nullable Instant endCommitTime, String target) {
    return FactsTable.row()
        .set(FactsTable.APP_ID, appId)
        .set(FactsTable.BATCH_ID, batchId)
        .set(FactsTable.ROWS, rows)
        .set(FactsTable.MIN_LSN, minLsn)
        .set(FactsTable.MAX_LSN, maxLsn)
        .set(FactsTable.MIN_COMMIT_TS, minCommitTs)
        .set(FactsTable.MAX_COMMIT_TS, maxCommitTs)
        .set(FactsTable.DELETES, deletes)
        .set(FactsTable.INSERTS, inserts)
        .set(FactsTable.UPDATES, updates)
        .set(FactsTable.END_LSN, endLsn.toString())
        .set(FactsTable.END_COMMIT_TS, endCommitTime)
        .set(FactsTable.TARGET, target);
  }

  /** The JSON form of the stats alone ({@link #fromJson} reads it). */
  public String toJson() {
    return statsNode().toString();
  }

  private ObjectNode statsNode() {
    ObjectNode node = JSON.createObjectNode();
    node.put("batch_id", batchId);
    node.put("rows", rows);
    node.put("min_lsn", minLsn);
    node.put("max_lsn", maxLsn);
    node.put("min_commit_ts", minCommitTs == null ? null : minCommitTs.toString());
    node.put("max_commit_ts", maxCommitTs == null ? null : maxCommitTs.toString());
    node.put("deletes", deletes);
    node.put("inserts", inserts);
    node.put("updates", updates);
    return node;
  }

  /**
   * The JSON form stored with the bronze commit: the stats, the batch's range and the gaps of
   * purged changes it skipped ({@code "skipped"}, {@link SkippedRange#toJson}), so the facts rows
   * of a batch whose facts commit did not happen are rebuilt whole ({@link #skippedOf}).
   */
  public String toJson(ChangeBatch batch) {
    ObjectNode node = statsNode();
    node.put("from_lsn", batch.fromLsn().toString());
    node.put("end_lsn", batch.toLsn().toString());
    node.put("end_commit_ts", batch.toCommitTime().toString());
    if (!batch.source().skipped().isEmpty()) {
      ArrayNode skipped = node.putArray("skipped");
      batch.source().skipped().forEach(gap -> skipped.add(gap.toJson()));
    }
    return node.toString();
  }

  /**
   * The gaps a batch skipped, from the JSON form of {@link #toJson(ChangeBatch)}; empty when it
   * skipped none (or was recorded before gaps were).
   *
   * @throws IllegalArgumentException when the JSON is malformed
   */
  public static List<SkippedRange> skippedOf(String json) {
    try {
      List<SkippedRange> gaps = new ArrayList<>();
      JSON.readTree(json).path("skipped").forEach(n -> gaps.add(SkippedRange.fromJson(n)));
      return gaps;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Not the stats of a batch: " + json, e);
    }
  }

  /**
   * Parses the JSON form.
   *
   * @throws IllegalArgumentException when it is not the stats of a batch
   */
  public static BatchStats fromJson(String json) {
    try {
      JsonNode n = JSON.readTree(json);
      return new BatchStats(
          n.get("batch_id").asLong(),
          n.get("rows").asLong(),
          text(n, "min_lsn"),
          text(n, "max_lsn"),
          instant(n, "min_commit_ts"),
          instant(n, "max_commit_ts"),
          n.get("deletes").asLong(),
          n.get("inserts").asLong(),
          n.get("updates").asLong());
    } catch (JsonProcessingException | NullPointerException e) {
      throw new IllegalArgumentException("Not the stats of a batch: " + json, e);
    }
  }

  private static @Nullable String text(JsonNode n, String key) {
    JsonNode v = n.get(key);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static @Nullable Instant instant(JsonNode n, String key) {
    String v = text(n, key);
    return v == null ? null : Instant.parse(v);
  }
}
