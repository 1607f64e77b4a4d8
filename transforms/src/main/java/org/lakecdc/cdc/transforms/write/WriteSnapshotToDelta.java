package org.lakecdc.cdc.transforms.write;

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
import org.lakecdc.cdc.transforms.bronze.BronzeTable;
import org.lakecdc.cdc.transforms.delta.DataFileAction;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
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
  /** Domain of the snapshot record in bronze: {@code {"lsn", "commit_ts", "rows"}}. */
  public static final String SNAPSHOT_DOMAIN = "mssql_cdc.snapshot";

  private final String bronzePath;
  private final Schema changeSchema;
  private final StreamPosition position;
  private final int shards;

  private WriteSnapshotToDelta(
      String bronzePath, Schema changeSchema, StreamPosition position, int shards) {
    this.bronzePath = bronzePath;
    this.changeSchema = changeSchema;
    this.position = position;
    this.shards = shards;
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
        Objects.requireNonNull(bronzePath), changeSchema, position, shards);
  }

  /** The JSON of the snapshot record. */
  static String snapshotJson(Lsn lsn, Instant commitTime, long rows) {
    return "{\"lsn\":\"" + lsn + "\",\"commit_ts\":\"" + commitTime + "\",\"rows\":" + rows + "}";
  }

  /** The S of the snapshot recorded in bronze, if one was committed. */
  public static Optional<Lsn> committedSnapshot(DeltaTables tables, String bronzePath) {
    return tables
        .domainMetadata(bronzePath, SNAPSHOT_DOMAIN)
        .map(json -> json.replaceAll(".*\"lsn\":\"(0x[0-9A-F]{20})\".*", "$1"))
        .map(Lsn::parse);
  }

  /** The rows recorded with the committed snapshot, if one was committed. */
  public static Optional<Long> committedSnapshotRows(DeltaTables tables, String bronzePath) {
    return tables
        .domainMetadata(bronzePath, SNAPSHOT_DOMAIN)
        .map(json -> json.replaceAll(".*\"rows\":(-?[0-9]+).*", "$1"))
        .map(Long::parseLong);
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
            "Write bronze data files", ParDo.of(new WriteFiles(bronzePath, changeSchema, position)))
        .setCoder(SerializableCoder.of(DataFileAction.class))
        .apply("One committer", WithKeys.of(bronzePath))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), SerializableCoder.of(DataFileAction.class)))
        .apply("Collect data files", GroupByKey.create())
        .apply("Values", Values.create())
        .apply("Commit the snapshot", ParDo.of(new CommitSnapshot(bronzePath, position)));
  }

  private static final class WriteFiles extends DoFn<KV<Integer, Iterable<Row>>, DataFileAction> {
    private final String bronzePath;
    private final Schema changeSchema;
    private final String snapshot;
    private transient DeltaTables tables;
    private transient Schema bronzeSchema;

    WriteFiles(String bronzePath, Schema changeSchema, StreamPosition position) {
      this.bronzePath = bronzePath;
      this.changeSchema = changeSchema;
      this.snapshot = position.endLsn().toString();
    }

    @Setup
    public void setup() {
      tables = DeltaTables.create();
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
    private transient DeltaTables tables;

    CommitSnapshot(String bronzePath, StreamPosition position) {
      this.bronzePath = bronzePath;
      this.position = position;
    }

    @Setup
    public void setup() {
      tables = DeltaTables.create();
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
    if (committedSnapshot(tables, bronzePath).isPresent()) {
      return -1;
    }
    Instant time = Objects.requireNonNull(position.endCommitTime(), "commit time of S");
    tables.commit(
        bronzePath,
        files,
        null,
        0,
        Map.of(
            SNAPSHOT_DOMAIN,
            snapshotJson(position.endLsn(), time, rows),
            StreamPosition.BRONZE_DOMAIN,
            position.toJson()));
    return rows;
  }
}
