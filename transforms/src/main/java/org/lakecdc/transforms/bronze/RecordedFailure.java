package org.lakecdc.transforms.bronze;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.TableFailure;
import org.lakecdc.transforms.TableMetrics;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The record of a table that failed alone in a run of many tables ({@link TableFailure}): one
 * {@code table_failed} row in the shared facts table ({@code detail} = {@code <ErrorClass>:
 * <message>}, {@code end_lsn} and {@code end_commit_ts} = the target's committed position, {@code
 * min_lsn} = the first LSN it could not read) and, in the same commit, the Delta domain {@code
 * mssql_cdc.failure.<appId>} holding the same as JSON, so that the launcher and {@code status} read
 * a table's last failure from the facts table's metadata without scanning it.
 *
 * <p>Written under the transaction id {@code (<appId>#failed, run start in epoch milliseconds)}: a
 * retried bundle of the same run writes it once, every run that fails writes its own.
 *
 * @param appId the target's app id
 * @param target the bronze table
 * @param errorClass the error's simple class name, e.g. {@code DataLossError}
 * @param message the error's message (first line)
 * @param batchId the batch that could not be read (the next batch after the position)
 * @param fromLsn the first LSN that could not be read
 * @param positionLsn the target's committed position when it failed
 * @param positionCommitTime its UTC commit time, or null
 * @param runStartedAt when the failing run started (UTC)
 * @param writtenAt when the failure was recorded (UTC)
 */
public record RecordedFailure(
    String appId,
    String target,
    String errorClass,
    String message,
    long batchId,
    Lsn fromLsn,
    Lsn positionLsn,
    @Nullable Instant positionCommitTime,
    Instant runStartedAt,
    Instant writtenAt) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public RecordedFailure {
    Objects.requireNonNull(appId, "appId");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(errorClass, "errorClass");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(fromLsn, "fromLsn");
    Objects.requireNonNull(positionLsn, "positionLsn");
    Objects.requireNonNull(runStartedAt, "runStartedAt");
    Objects.requireNonNull(writtenAt, "writtenAt");
  }

  /**
   * The failure of the target at {@code position}: the read could not go past it.
   *
   * @param position the target's committed position
   * @param failure what stopped the table
   * @param fromLsn the first LSN that could not be read
   * @param runStartedAt when the run started
   */
  public static RecordedFailure at(
      StreamPosition position,
      String target,
      TableFailure failure,
      Lsn fromLsn,
      Instant runStartedAt) {
    return new RecordedFailure(
        position.appId(),
        target,
        failure.errorClass(),
        failure.message(),
        position.batchId() + 1,
        fromLsn,
        position.endLsn(),
        position.endCommitTime(),
        runStartedAt,
        Instant.now());
  }

  /** The Delta domain of {@code appId}'s last failure in the facts table. */
  public static String domain(String appId) {
    return "mssql_cdc.failure." + appId;
  }

  /** {@code <ErrorClass>: <message>}. */
  public String text() {
    return errorClass + ": " + message;
  }

  /**
   * Appends the {@code table_failed} facts row and the domain, once per run.
   *
   * @param tables the Delta tables
   * @param factsPath the facts table
   */
  public void write(DeltaTables tables, String factsPath) {
    org.apache.beam.sdk.metrics.Metrics.counter(
            TableMetrics.namespace(appId), TableMetrics.FAILURES)
        .inc();
    tables.append(
        factsPath,
        FactsTable.SCHEMA,
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, appId)
                .set(FactsTable.BATCH_ID, batchId)
                .set(FactsTable.ROWS, 0L)
                .set(FactsTable.EVENT, FactsTable.EVENT_TABLE_FAILED)
                .set(FactsTable.MIN_LSN, fromLsn.toString())
                .set(FactsTable.END_LSN, positionLsn.toString())
                .set(FactsTable.END_COMMIT_TS, positionCommitTime)
                .set(FactsTable.DETAIL, text())
                .set(FactsTable.TARGET, target)
                .set(FactsTable.STARTED_AT, runStartedAt)
                .set(FactsTable.WRITTEN_AT, writtenAt)
                .build()),
        appId + "#failed",
        runStartedAt.toEpochMilli(),
        Map.of(domain(appId), toJson()));
  }

  /**
   * The last failure recorded for {@code appId} in the facts table, from its domain metadata.
   *
   * @return empty when the table never failed, or the facts table does not exist
   */
  public static Optional<RecordedFailure> last(DeltaTables tables, String factsPath, String appId) {
    if (!tables.exists(factsPath)) {
      return Optional.empty();
    }
    return tables.domainMetadata(factsPath, domain(appId)).map(RecordedFailure::fromJson);
  }

  /** The JSON form, as stored in the domain. */
  public String toJson() {
    ObjectNode node = JSON.createObjectNode();
    node.put("app_id", appId);
    node.put("target", target);
    node.put("error_class", errorClass);
    node.put("message", message);
    node.put("batch_id", batchId);
    node.put("from_lsn", fromLsn.toString());
    node.put("position_lsn", positionLsn.toString());
    if (positionCommitTime != null) {
      node.put("position_commit_ts", positionCommitTime.toString());
    }
    node.put("run_started_at", runStartedAt.toString());
    node.put("written_at", writtenAt.toString());
    return node.toString();
  }

  /** The record of {@link #toJson}. */
  public static RecordedFailure fromJson(String json) {
    try {
      JsonNode n = JSON.readTree(json);
      return new RecordedFailure(
          n.get("app_id").asText(),
          n.get("target").asText(),
          n.get("error_class").asText(),
          n.get("message").asText(),
          n.get("batch_id").asLong(),
          Lsn.parse(n.get("from_lsn").asText()),
          Lsn.parse(n.get("position_lsn").asText()),
          n.hasNonNull("position_commit_ts")
              ? Instant.parse(n.get("position_commit_ts").asText())
              : null,
          Instant.parse(n.get("run_started_at").asText()),
          Instant.parse(n.get("written_at").asText()));
    } catch (IOException e) {
      throw new UncheckedIOException("Not a table failure: " + json, e);
    }
  }
}
