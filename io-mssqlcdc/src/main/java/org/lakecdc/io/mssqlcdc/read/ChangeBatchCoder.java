package org.lakecdc.io.mssqlcdc.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The coder of {@link ChangeBatch}: one JSON object (UTF-8, length-prefixed by {@link
 * StringUtf8Coder}) with LSNs as canonical text and times as ISO-8601 UTC instants. Text rather
 * than Java serialization, so state that holds batches (a Flink savepoint, the continuous
 * committer's bag) survives a change of the classes and can be read by a person.
 */
final class ChangeBatchCoder extends AtomicCoder<ChangeBatch> {
  private static final ChangeBatchCoder INSTANCE = new ChangeBatchCoder();
  private static final ObjectMapper JSON = new ObjectMapper();

  private ChangeBatchCoder() {}

  /** The coder. */
  static ChangeBatchCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(ChangeBatch batch, OutputStream out) throws IOException {
    StringUtf8Coder.of().encode(toJson(batch), out);
  }

  @Override
  public ChangeBatch decode(InputStream in) throws IOException {
    return fromJson(StringUtf8Coder.of().decode(in));
  }

  @Override
  public void verifyDeterministic() {}

  /** The JSON form of {@code batch}. */
  static String toJson(ChangeBatch batch) {
    ObjectNode node = JSON.createObjectNode();
    node.put("capture_instance", batch.captureInstance());
    node.put("from_lsn", batch.fromLsn().toString());
    node.put("to_lsn", batch.toLsn().toString());
    node.put("to_commit_ts", batch.toCommitTime().toString());
    node.put("rows", batch.rows());
    ArrayNode read = node.putArray("read_instances");
    batch.readInstances().forEach(read::add);
    node.put("sequence", batch.sequence());
    BatchSource source = batch.source();
    ObjectNode src = node.putObject("source");
    putInstant(src, "retention_watermark_ts", source.retentionWatermark());
    putInstant(src, "source_max_commit_ts", source.sourceMaxCommitTime());
    putInstant(src, "source_ts", source.sourceTime());
    src.put("read_nanos", source.readNanos());
    src.put("read_bytes", source.readBytes());
    ArrayNode ddl = src.putArray("ddl");
    for (BatchSource.Ddl each : source.ddl()) {
      ObjectNode d = ddl.addObject();
      d.put("lsn", each.lsn().toString());
      putInstant(d, "commit_ts", each.commitTime());
      d.put("command", each.command());
    }
    ArrayNode instances = src.putArray("instances");
    for (BatchSource.InstanceRead each : source.instances()) {
      ObjectNode i = instances.addObject();
      i.put("name", each.name());
      if (each.startLsn() != null) {
        i.put("start_lsn", each.startLsn().toString());
      }
      putInstant(i, "start_commit_ts", each.startCommitTime());
      ArrayNode lost = i.putArray("not_captured");
      each.notCaptured().forEach(lost::add);
    }
    ArrayNode skipped = src.putArray("skipped");
    source.skipped().forEach(k -> skipped.add(k.toJson()));
    TableFailure failure = batch.failure();
    if (failure != null) {
      ObjectNode f = node.putObject("failure");
      f.put("error_class", failure.errorClass());
      f.put("message", failure.message());
    }
    return node.toString();
  }

  /** The batch of {@link #toJson}. */
  static ChangeBatch fromJson(String json) throws CoderException {
    try {
      JsonNode node = JSON.readTree(json);
      JsonNode src = node.get("source");
      List<BatchSource.Ddl> ddl = new ArrayList<>();
      for (JsonNode d : src.get("ddl")) {
        ddl.add(
            new BatchSource.Ddl(
                Lsn.parse(d.get("lsn").asText()),
                instant(d, "commit_ts"),
                d.get("command").asText()));
      }
      List<BatchSource.InstanceRead> instances = new ArrayList<>();
      for (JsonNode i : src.get("instances")) {
        instances.add(
            new BatchSource.InstanceRead(
                i.get("name").asText(),
                i.hasNonNull("start_lsn") ? Lsn.parse(i.get("start_lsn").asText()) : null,
                instant(i, "start_commit_ts"),
                texts(i.get("not_captured"))));
      }
      List<SkippedRange> skipped = new ArrayList<>();
      src.path("skipped").forEach(k -> skipped.add(SkippedRange.fromJson(k)));
      return new ChangeBatch(
          node.get("capture_instance").asText(),
          Lsn.parse(node.get("from_lsn").asText()),
          Lsn.parse(node.get("to_lsn").asText()),
          Instant.parse(node.get("to_commit_ts").asText()),
          node.get("rows").asLong(),
          texts(node.get("read_instances")),
          node.get("sequence").asLong(),
          new BatchSource(
              instant(src, "retention_watermark_ts"),
              instant(src, "source_max_commit_ts"),
              instant(src, "source_ts"),
              src.get("read_nanos").asLong(),
              src.get("read_bytes").asLong(),
              ddl,
              instances,
              skipped),
          node.hasNonNull("failure")
              ? new TableFailure(
                  node.get("failure").get("error_class").asText(),
                  node.get("failure").get("message").asText())
              : null);
    } catch (IOException | RuntimeException e) {
      throw new CoderException("Not a change batch: " + json, e);
    }
  }

  private static void putInstant(ObjectNode node, String field, @Nullable Instant value) {
    if (value != null) {
      node.put(field, value.toString());
    }
  }

  private static @Nullable Instant instant(JsonNode node, String field) {
    return node.hasNonNull(field) ? Instant.parse(node.get(field).asText()) : null;
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(e -> out.add(e.asText()));
    return out;
  }
}
