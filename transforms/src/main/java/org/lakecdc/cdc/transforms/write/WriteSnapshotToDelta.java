package org.lakecdc.cdc.transforms.write;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.cdc.transforms.bronze.BronzeTable;
import org.lakecdc.cdc.transforms.delta.CommitResult;
import org.lakecdc.cdc.transforms.delta.DataFileAction;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
import org.lakecdc.cdc.transforms.delta.HadoopConf;
import org.lakecdc.cdc.transforms.position.StreamPosition;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/**
 * Writes a whole snapshot (the rows of {@code MssqlCdcIO.snapshot()}, all stamped with the snapshot
 * LSN S) to bronze in ONE commit: data files are written in parallel (rows spread over shards),
 * then one committer commits them all with the domain metadata {@value #SNAPSHOT_DOMAIN} (S, its
 * commit time, the rows) and the stream position right at S. Bronze rows get {@code _snapshot = S},
 * {@code _batch_id} and {@code _chunk} NULL.
 *
 * <p>A snapshot already committed (the domain is present, a rerun after a crash) is not written
 * again: its S is what the stream continues from, never a newer one (BEHAVIOUR.md invariant 12). An
 * empty table commits no data file but still records the snapshot and the position.
 */
public final class WriteSnapshotToDelta extends PTransform<PCollection<Row>, PCollection<Long>> {
  /**
   * Domain of the snapshot record in bronze: {@code {"lsn", "commit_ts", "rows"}}, plus {@code
   * "kind": "seed", "seed_table", "as_of"} for a seed from an existing copy (BEHAVIOUR.md 6.6).
   */
  public static final String SNAPSHOT_DOMAIN = "mssql_cdc.snapshot";

  private final String bronzePath;
  private final Schema changeSchema;
  private final StreamPosition position;
  private final int shards;
  private final HadoopConf hadoopConf;

  private WriteSnapshotToDelta(
      String bronzePath,
      Schema changeSchema,
      StreamPosition position,
      int shards,
      HadoopConf hadoopConf) {
    this.bronzePath = bronzePath;
    this.changeSchema = changeSchema;
    this.position = position;
    this.shards = shards;
    this.hadoopConf = hadoopConf;
  }

  /** The same write, its workers opening bronze with {@code conf} (default: none). */
  public WriteSnapshotToDelta withHadoopConf(HadoopConf conf) {
    return new WriteSnapshotToDelta(
        bronzePath, changeSchema, position, shards, Objects.requireNonNull(conf));
  }

  /**
   * Writes to {@code bronzePath}; {@code position} is the position at S (batch -1, end LSN S and
   * its commit time); {@code shards} files are written in parallel (at least 1).
   */
  public static WriteSnapshotToDelta to(
      String bronzePath, Schema changeSchema, StreamPosition position, int shards) {
    if (shards < 1) {
      throw new IllegalArgumentException("shards must be at least 1, not " + shards);
    }
    return new WriteSnapshotToDelta(
        Objects.requireNonNull(bronzePath), changeSchema, position, shards, HadoopConf.empty());
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The JSON of the snapshot record. */
  static String snapshotJson(Lsn lsn, Instant commitTime, long rows) {
    return snapshotJson(lsn, commitTime, rows, null);
  }

  private static String snapshotJson(
      Lsn lsn, Instant commitTime, long rows, @Nullable SeedSource seed) {
    ObjectNode node = JSON.createObjectNode();
    node.put("lsn", lsn.toString());
    node.put("commit_ts", commitTime.toString());
    node.put("rows", rows);
    if (seed != null) {
      node.put("kind", "seed");
      node.put("seed_table", seed.table());
      node.put("as_of", seed.asOf());
    }
    return node.toString();
  }

  /**
   * Where a seed's rows came from (BEHAVIOUR.md 6.6): recorded with the snapshot so that the facts
   * event and a rerun can tell a seed from a bootstrap snapshot.
   *
   * @param table the path or URI of the copy the rows were read from
   * @param asOf the seed's {@code as_of}: a UTC instant ({@code 2026-09-28T13:52:00Z}) or an LSN
   */
  public record SeedSource(String table, String asOf) implements java.io.Serializable {
    public SeedSource {
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(asOf, "asOf");
    }
  }

  /**
   * The snapshot record of bronze.
   *
   * @param lsn the snapshot's LSN (S, or a seed's L): every snapshot row's {@code _start_lsn} and
   *     {@code _snapshot}
   * @param commitTime the UTC commit time of {@code lsn} ({@code _commit_ts} of the rows)
   * @param rows the rows committed, -1 when unknown
   * @param seed where a seed's rows came from, or null for a snapshot of the source table
   */
  public record SnapshotRecord(Lsn lsn, Instant commitTime, long rows, @Nullable SeedSource seed) {}

  /**
   * The snapshot record committed to bronze, if any.
   *
   * @throws IllegalStateException when no table exists at {@code bronzePath}
   * @throws IllegalArgumentException when the record is not valid JSON of this form
   */
  public static Optional<SnapshotRecord> committedRecord(DeltaTables tables, String bronzePath) {
    return tables.domainMetadata(bronzePath, SNAPSHOT_DOMAIN).map(WriteSnapshotToDelta::parse);
  }

  private static SnapshotRecord parse(String json) {
    try {
      JsonNode node = JSON.readTree(json);
      SeedSource seed =
          "seed".equals(node.path("kind").asText(""))
              ? new SeedSource(node.path("seed_table").asText(""), node.path("as_of").asText(""))
              : null;
      return new SnapshotRecord(
          Lsn.parse(node.get("lsn").asText()),
          Instant.parse(node.get("commit_ts").asText()),
          node.path("rows").asLong(-1),
          seed);
    } catch (JsonProcessingException | NullPointerException | java.time.DateTimeException e) {
      throw new IllegalArgumentException("Not a snapshot record: " + json, e);
    }
  }

  /** The S of the snapshot recorded in bronze, if one was committed. */
  public static Optional<Lsn> committedSnapshot(DeltaTables tables, String bronzePath) {
    return committedRecord(tables, bronzePath).map(SnapshotRecord::lsn);
  }

  /** The rows recorded with the committed snapshot, if one was committed. */
  public static Optional<Long> committedSnapshotRows(DeltaTables tables, String bronzePath) {
    return committedRecord(tables, bronzePath).map(SnapshotRecord::rows);
  }

  @Override
  public PCollection<Long> expand(PCollection<Row> snapshotRows) {
    int n = shards;
    PCollection<KV<Integer, Row>> sharded =
        snapshotRows
            .apply(
                "Spread rows over shards", WithKeys.of((Row r) -> Math.floorMod(r.hashCode(), n)))
            .setCoder(KvCoder.of(VarIntCoder.of(), snapshotRows.getCoder()));
    return sharded
        .apply("Group rows by shard", GroupByKey.create())
        .apply(
            "Write bronze data files",
            ParDo.of(new WriteFiles(bronzePath, changeSchema, position, hadoopConf)))
        .setCoder(SerializableCoder.of(DataFileAction.class))
        .apply("One committer", WithKeys.of(bronzePath))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), SerializableCoder.of(DataFileAction.class)))
        .apply("Collect data files", GroupByKey.create())
        .apply("Values", Values.create())
        .apply(
            "Commit the snapshot", ParDo.of(new CommitSnapshot(bronzePath, position, hadoopConf)));
  }

  private static final class WriteFiles extends DoFn<KV<Integer, Iterable<Row>>, DataFileAction> {
    private final String bronzePath;
    private final Schema changeSchema;
    private final String snapshot;
    private final HadoopConf hadoopConf;
    private transient DeltaTables tables;
    private transient Schema bronzeSchema;

    WriteFiles(
        String bronzePath, Schema changeSchema, StreamPosition position, HadoopConf hadoopConf) {
      this.bronzePath = bronzePath;
      this.changeSchema = changeSchema;
      this.snapshot = position.endLsn().toString();
      this.hadoopConf = hadoopConf;
    }

    @Setup
    public void setup() {
      tables = hadoopConf.tables();
      bronzeSchema = BronzeTable.schema(changeSchema);
    }

    @ProcessElement
    public void process(
        @Element KV<Integer, Iterable<Row>> shard, OutputReceiver<DataFileAction> out) {
      Iterable<Row> rows =
          () ->
              new java.util.Iterator<Row>() {
                private final java.util.Iterator<Row> it = shard.getValue().iterator();

                @Override
                public boolean hasNext() {
                  return it.hasNext();
                }

                @Override
                public Row next() {
                  return BronzeTable.toBronzeRow(bronzeSchema, it.next(), null, snapshot, null);
                }
              };
      for (DataFileAction file : tables.writeDataFiles(bronzePath, bronzeSchema, rows)) {
        out.output(file);
      }
    }
  }

  private static final class CommitSnapshot extends DoFn<Iterable<DataFileAction>, Long> {
    private final String bronzePath;
    private final StreamPosition position;
    private final HadoopConf hadoopConf;
    private transient DeltaTables tables;

    CommitSnapshot(String bronzePath, StreamPosition position, HadoopConf hadoopConf) {
      this.bronzePath = bronzePath;
      this.position = position;
      this.hadoopConf = hadoopConf;
    }

    @Setup
    public void setup() {
      tables = hadoopConf.tables();
    }

    @ProcessElement
    public void process(@Element Iterable<DataFileAction> files, OutputReceiver<Long> out) {
      List<DataFileAction> all = new ArrayList<>();
      files.forEach(all::add);
      long rows = all.stream().mapToLong(DataFileAction::rowCount).sum();
      out.output(commit(tables, bronzePath, position, all, rows));
    }
  }

  /**
   * Commits the snapshot's files with its record and the position, unless a snapshot is already
   * recorded. Also used for an empty table (no files).
   *
   * @return the rows committed, or -1 when a snapshot was already recorded
   */
  public static long commit(
      DeltaTables tables,
      String bronzePath,
      StreamPosition position,
      List<DataFileAction> files,
      long rows) {
    return commit(tables, bronzePath, position, files, rows, null);
  }

  /**
   * {@link #commit(DeltaTables, String, StreamPosition, List, long)} recording, for a seed, where
   * the rows came from ({@code "kind": "seed"} in the snapshot record).
   *
   * @param seed the copy the rows were read from, or null for a snapshot of the source table
   * @return the rows committed, or -1 when a snapshot was already recorded
   */
  public static long commit(
      DeltaTables tables,
      String bronzePath,
      StreamPosition position,
      List<DataFileAction> files,
      long rows,
      @Nullable SeedSource seed) {
    if (committedSnapshot(tables, bronzePath).isPresent()) {
      return -1;
    }
    return commitOnce(tables, bronzePath, position, files, rows, seed);
  }

  /**
   * The transaction app id of a target's one snapshot (or seed) commit, version 0: {@code
   * <appId>#snapshot}. Two runs that both found no snapshot and both took one race to commit; Delta
   * refuses the loser's commit ({@code ConcurrentTransactionException}), so bronze holds the rows
   * of one snapshot only.
   */
  static String snapshotAppId(StreamPosition position) {
    return position.appId() + "#snapshot";
  }

  /**
   * Commits the snapshot under {@link #snapshotAppId} version 0, without looking for a recorded
   * snapshot first: what the loser of two concurrent runs does.
   *
   * @return the rows committed, or -1 when another commit of the target's snapshot won
   */
  static long commitOnce(
      DeltaTables tables,
      String bronzePath,
      StreamPosition position,
      List<DataFileAction> files,
      long rows,
      @Nullable SeedSource seed) {
    Instant time = Objects.requireNonNull(position.endCommitTime(), "commit time of S");
    CommitResult result =
        tables.commit(
            bronzePath,
            files,
            snapshotAppId(position),
            0,
            Map.of(
                SNAPSHOT_DOMAIN,
                snapshotJson(position.endLsn(), time, rows, seed),
                StreamPosition.BRONZE_DOMAIN,
                position.toJson()));
    return result.committed() ? rows : -1;
  }
}
