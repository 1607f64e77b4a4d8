package org.lakecdc.transforms.snapshot;

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
import java.util.TreeMap;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileWriter;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Writes a whole snapshot (the rows of {@code MssqlCdcIO.snapshot()}, all stamped with the snapshot
 * LSN S) to bronze in ONE commit: data files are written in parallel where the rows are, then one
 * committer commits them all with the domain metadata {@value #SNAPSHOT_DOMAIN} (S, its commit
 * time, the rows), the stream position right at S and the transaction id {@code (<appId>#snapshot,
 * 0)}. Bronze rows get {@code _snapshot = S}, {@code _batch_id} and {@code _chunk} NULL.
 *
 * <h2>Forms</h2>
 *
 * <ul>
 *   <li>{@link #from(MssqlCdcIO.Snapshot)}{@code .to(bronzePath, position)} ({@link FromSnapshot},
 *       a {@code PTransform<PBegin, PCollection<Long>>}): the snapshot read writes each key range's
 *       rows itself ({@code MssqlCdcIO.Snapshot#writeTo} with a {@link SnapshotFileSink}), so rows
 *       never become elements: key ranges are read and written in parallel, and memory is bounded
 *       by one batch of 4096 rows and the open file's row group per range being written.
 *   <li>{@link #to(String, Schema, StreamPosition)} (this class, a {@code
 *       PTransform<PCollection<Row>, PCollection<Long>>}) for rows already in a {@code PCollection}
 *       (e.g. a seed's copy read in parallel): each bundle writes its rows into files of its own
 *       (one open file per bundle, rolled at the target file size, closed when the bundle finishes,
 *       the shape of Beam IcebergIO's {@code WriteUngroupedRowsToFiles}); no row is grouped or
 *       shuffled. The input must be in the global window.
 * </ul>
 *
 * In both, only the file descriptions ({@link SnapshotFiles}, {@link
 * org.lakecdc.transforms.delta.DataFileActionCoder}) travel to the committer, through a global
 * {@code Combine}. Files roll at Kernel's target size ({@code
 * delta.kernel.default.parquet.writer.targetMaxFileSize}, 128 MiB by default; set it with {@link
 * #withHadoopConf}). The output is one element: the rows committed, -1 when a snapshot was already
 * recorded, or {@link #NOT_COMMITTED} when the retention check refused the commit of a write {@link
 * FromSnapshot#withRefusalAsOutput}.
 *
 * <p>A snapshot already committed (the domain is present, a rerun after a crash) is not written
 * again: its S is what the stream continues from, never a newer one (docs/tables.md "Bronze"). An
 * empty table commits no data file but still records the snapshot and the position.
 *
 * <p>With {@link FromSnapshot#withRetentionCheck} the committer first checks that CDC still holds
 * the changes right after S: rows read over a span whose changes cleanup purged are no snapshot of
 * any moment (a row read late may show a change whose delete or update of another row is gone), so
 * such a read is never committed; the commit fails with {@link DataLossError} and its data files
 * stay orphans for {@code VACUUM}.
 */
public final class WriteSnapshotToDelta extends PTransform<PCollection<Row>, PCollection<Long>> {
  /**
   * Domain of the snapshot record in bronze: {@code {"lsn", "commit_ts", "rows"}}, plus {@code
   * "kind": "seed", "seed_table", "as_of"} for a seed from an existing copy (docs/options.md
   * "Seeding from a copy").
   */
  public static final String SNAPSHOT_DOMAIN = "mssql_cdc.snapshot";

  /**
   * The output of a snapshot write whose commit the retention check refused ({@link
   * FromSnapshot#withRefusalAsOutput}): nothing of it is in bronze.
   */
  public static final long NOT_COMMITTED = -2;

  private final String bronzePath;
  private final Schema changeSchema;
  private final StreamPosition position;
  private final @Nullable SeedSource seed;
  private final Map<String, String> hadoopConf;

  private WriteSnapshotToDelta(
      String bronzePath,
      Schema changeSchema,
      StreamPosition position,
      @Nullable SeedSource seed,
      Map<String, String> hadoopConf) {
    this.bronzePath = bronzePath;
    this.changeSchema = changeSchema;
    this.position = position;
    this.seed = seed;
    this.hadoopConf = hadoopConf;
  }

  /**
   * Writes snapshot rows of {@code changeSchema} (the input) to {@code bronzePath}, which must
   * exist; {@code position} is the position at S (batch -1, end LSN S and its commit time).
   */
  public static WriteSnapshotToDelta to(
      String bronzePath, Schema changeSchema, StreamPosition position) {
    return new WriteSnapshotToDelta(
        Objects.requireNonNull(bronzePath, "bronzePath"),
        Objects.requireNonNull(changeSchema, "changeSchema"),
        Objects.requireNonNull(position, "position"),
        null,
        Map.of());
  }

  /**
   * The same write recording, for a seed, where the rows came from ({@code "kind": "seed"} in the
   * snapshot record).
   */
  public WriteSnapshotToDelta withSeed(SeedSource seed) {
    return new WriteSnapshotToDelta(
        bronzePath, changeSchema, position, Objects.requireNonNull(seed, "seed"), hadoopConf);
  }

  /**
   * The same write with these Hadoop properties over the default configuration on every worker
   * (file system settings, {@code delta.kernel.default.parquet.writer.targetMaxFileSize}).
   */
  public WriteSnapshotToDelta withHadoopConf(HadoopConf conf) {
    return withHadoopConf(conf.entries());
  }

  /** The same write with these Hadoop properties (see {@link #withHadoopConf(HadoopConf)}). */
  public WriteSnapshotToDelta withHadoopConf(Map<String, String> hadoopConf) {
    return new WriteSnapshotToDelta(
        bronzePath, changeSchema, position, seed, new TreeMap<>(hadoopConf));
  }

  /**
   * The snapshot read writing its key ranges straight to bronze: finish with {@link
   * SnapshotSource#to(String, StreamPosition)}.
   *
   * @param snapshot the configured snapshot read; its S is set to the position's end LSN
   */
  public static SnapshotSource from(MssqlCdcIO.Snapshot snapshot) {
    return new SnapshotSource(Objects.requireNonNull(snapshot, "snapshot"));
  }

  /** A snapshot read to be written to bronze: see {@link #from(MssqlCdcIO.Snapshot)}. */
  public static final class SnapshotSource {
    private final MssqlCdcIO.Snapshot snapshot;

    private SnapshotSource(MssqlCdcIO.Snapshot snapshot) {
      this.snapshot = snapshot;
    }

    /**
     * Writes to {@code bronzePath}, which must exist when the pipeline runs.
     *
     * @param position the position at S (batch -1, end LSN S and its commit time): S is also the
     *     snapshot LSN the read stamps on its rows
     */
    public FromSnapshot to(String bronzePath, StreamPosition position) {
      return new FromSnapshot(
          snapshot.withSnapshotLsn(position.endLsn()),
          Objects.requireNonNull(bronzePath, "bronzePath"),
          position,
          null,
          Map.of(),
          null,
          null,
          false);
    }
  }

  /**
   * The snapshot read writing each key range to bronze data files in the reading stage, then one
   * commit: see {@link WriteSnapshotToDelta}.
   */
  public static final class FromSnapshot extends PTransform<PBegin, PCollection<Long>> {
    private final MssqlCdcIO.Snapshot snapshot;
    private final String bronzePath;
    private final StreamPosition position;
    private final @Nullable SeedSource seed;
    private final Map<String, String> hadoopConf;
    private final SnapshotFileSink.@Nullable RowListener listener;
    private final @Nullable RetentionCheck retention;
    private final boolean refusalAsOutput;

    private FromSnapshot(
        MssqlCdcIO.Snapshot snapshot,
        String bronzePath,
        StreamPosition position,
        @Nullable SeedSource seed,
        Map<String, String> hadoopConf,
        SnapshotFileSink.@Nullable RowListener listener,
        @Nullable RetentionCheck retention,
        boolean refusalAsOutput) {
      this.snapshot = snapshot;
      this.bronzePath = bronzePath;
      this.position = position;
      this.seed = seed;
      this.hadoopConf = hadoopConf;
      this.listener = listener;
      this.retention = retention;
      this.refusalAsOutput = refusalAsOutput;
    }

    /**
     * The same write where the retention check's refusal ({@link #withRetentionCheck}) does not
     * fail the pipeline: the committer commits nothing and outputs {@link #NOT_COMMITTED}, so that
     * a pipeline of many tables records the refusal for this table alone and the others go on.
     */
    public FromSnapshot withRefusalAsOutput() {
      return new FromSnapshot(
          snapshot, bronzePath, position, seed, hadoopConf, listener, retention, true);
    }

    /** The same write with these Hadoop properties on every worker (see the class comment). */
    public FromSnapshot withHadoopConf(Map<String, String> hadoopConf) {
      return new FromSnapshot(
          snapshot,
          bronzePath,
          position,
          seed,
          new TreeMap<>(hadoopConf),
          listener,
          retention,
          refusalAsOutput);
    }

    /**
     * The same write committing only while CDC still holds the changes right after S ({@link
     * StartingLsn#lostAfter}, asked of {@code clientFactory}'s source for {@code captureInstance}
     * right before the commit): otherwise the committer commits nothing and fails with {@link
     * DataLossError} (see the class comment). A snapshot already recorded is not checked.
     */
    public FromSnapshot withRetentionCheck(CdcClientFactory clientFactory, String captureInstance) {
      return new FromSnapshot(
          snapshot,
          bronzePath,
          position,
          seed,
          hadoopConf,
          listener,
          new RetentionCheck(
              Objects.requireNonNull(clientFactory, "clientFactory"),
              Objects.requireNonNull(captureInstance, "captureInstance")),
          refusalAsOutput);
    }

    /** The same write with the job's Hadoop configuration on every worker. */
    public FromSnapshot withHadoopConf(HadoopConf conf) {
      return withHadoopConf(conf.entries());
    }

    /** The same write telling {@code listener} of each row written (e.g. progress lines). */
    public FromSnapshot withRowListener(SnapshotFileSink.RowListener listener) {
      return new FromSnapshot(
          snapshot,
          bronzePath,
          position,
          seed,
          hadoopConf,
          Objects.requireNonNull(listener, "listener"),
          retention,
          refusalAsOutput);
    }

    @Override
    public PCollection<Long> expand(PBegin input) {
      SnapshotFileSink sink =
          new SnapshotFileSink(bronzePath, position.endLsn().toString(), hadoopConf, listener);
      return input
          .apply("Read and write key ranges", snapshot.writeTo(sink))
          .apply(
              "Commit the snapshot",
              new CommitAll(bronzePath, position, seed, hadoopConf, retention, refusalAsOutput));
    }
  }

  /**
   * Whether CDC still holds the changes right after a snapshot's S, asked right before its commit.
   *
   * @param clientFactory the source
   * @param captureInstance a capture instance of the snapshot's table
   */
  record RetentionCheck(CdcClientFactory clientFactory, String captureInstance)
      implements java.io.Serializable {
    /**
     * Returns when CDC holds the changes right after {@code s}.
     *
     * @throws DataLossError when cleanup purged them: naming S, the capture instance's {@code
     *     min_lsn} and {@code bronzePath}, which received nothing
     */
    void requireHeldAfter(Lsn s, String bronzePath) {
      try (CdcClient client = clientFactory.open()) {
        Optional<Lsn> min = StartingLsn.lostAfter(client, captureInstance, s);
        if (min.isPresent()) {
          throw new DataLossError(
              captureInstance,
              client.incrementLsn(s),
              min.get(),
              captureInstance
                  + ": CDC cleanup purged the changes right after the snapshot's S = "
                  + s
                  + " (min_lsn is now "
                  + min.get()
                  + ") before its read ended: the snapshot is not committed to "
                  + bronzePath);
        }
      }
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The JSON of the snapshot record. */
  static String snapshotJson(Lsn lsn, Instant commitTime, long rows) {
    return snapshotJson(lsn, commitTime, rows, null, 0);
  }

  private static String snapshotJson(
      Lsn lsn, Instant commitTime, long rows, @Nullable SeedSource seed, int generation) {
    ObjectNode node = JSON.createObjectNode();
    node.put("lsn", lsn.toString());
    node.put("commit_ts", commitTime.toString());
    node.put("rows", rows);
    node.put("generation", generation);
    if (seed != null) {
      node.put("kind", "seed");
      node.put("seed_table", seed.table());
      node.put("as_of", seed.asOf());
    }
    return node.toString();
  }

  /**
   * Where a seed's rows came from (docs/options.md "Seeding from a copy"): recorded with the
   * snapshot so that the facts event and a rerun can tell a seed from a bootstrap snapshot.
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
   * @param generation the stream generation the snapshot started: 0 for the bootstrap (or seed), n
   *     for the re-snapshot that started generation n (0 in records written before generations)
   */
  public record SnapshotRecord(
      Lsn lsn, Instant commitTime, long rows, @Nullable SeedSource seed, int generation) {}

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
          seed,
          node.path("generation").asInt(0));
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
    if (!(snapshotRows.getWindowingStrategy().getWindowFn() instanceof GlobalWindows)) {
      throw new IllegalArgumentException(
          "WriteSnapshotToDelta needs its rows in the global window, not "
              + snapshotRows.getWindowingStrategy().getWindowFn());
    }
    return snapshotRows
        .apply(
            "Write bronze data files per bundle",
            ParDo.of(
                new WriteBundleFiles(
                    bronzePath, changeSchema, position.endLsn().toString(), hadoopConf)))
        .setCoder(SnapshotFiles.coder())
        .apply(
            "Commit the snapshot",
            new CommitAll(bronzePath, position, seed, hadoopConf, null, false));
  }

  /**
   * Writes the rows of each bundle into bronze data files of its own: one open file (rolled at the
   * target size by {@link DataFileWriter}), closed when the bundle finishes, which emits the files.
   */
  private static final class WriteBundleFiles extends DoFn<Row, SnapshotFiles> {
    private final String bronzePath;
    private final Schema changeSchema;
    private final String snapshot;
    private final Map<String, String> hadoopConf;
    private transient @Nullable DeltaTables tables;
    private transient @Nullable Schema bronzeSchema;
    private transient @Nullable DataFileWriter writer;
    private transient org.joda.time.@Nullable Instant latest;

    WriteBundleFiles(
        String bronzePath, Schema changeSchema, String snapshot, Map<String, String> hadoopConf) {
      this.bronzePath = bronzePath;
      this.changeSchema = changeSchema;
      this.snapshot = snapshot;
      this.hadoopConf = hadoopConf;
    }

    @Setup
    public void setup() {
      tables = DeltaTables.create(hadoopConf);
      bronzeSchema = BronzeTable.schema(changeSchema);
    }

    @StartBundle
    public void startBundle() {
      abandon();
    }

    @ProcessElement
    public void process(@Element Row row, @Timestamp org.joda.time.Instant timestamp) {
      DataFileWriter open = writer;
      Schema bronze = Objects.requireNonNull(bronzeSchema);
      if (open == null) {
        open = Objects.requireNonNull(tables).openDataFileWriter(bronzePath, bronze);
        writer = open;
      }
      open.write(BronzeTable.toBronzeRow(bronze, row, null, snapshot, null));
      if (latest == null || timestamp.isAfter(latest)) {
        latest = timestamp;
      }
    }

    @FinishBundle
    public void finishBundle(FinishBundleContext context) {
      DataFileWriter open = writer;
      if (open == null) {
        return;
      }
      SnapshotFiles files = new SnapshotFiles(open.rowCount(), open.finish());
      writer = null;
      context.output(files, Objects.requireNonNull(latest), GlobalWindow.INSTANCE);
      latest = null;
    }

    @Teardown
    public void teardown() {
      abandon();
    }

    /** Closes a writer a failed bundle left open; its files are never committed. */
    private void abandon() {
      DataFileWriter open = writer;
      writer = null;
      latest = null;
      if (open != null) {
        open.close();
      }
    }
  }

  /**
   * Merges the small file descriptions of every range or bundle into one (a global {@code Combine}:
   * an empty input gives {@link SnapshotFiles#NONE}) and commits them in one commit.
   */
  private static final class CommitAll
      extends PTransform<PCollection<SnapshotFiles>, PCollection<Long>> {
    private final CommitSnapshot commit;

    CommitAll(
        String bronzePath,
        StreamPosition position,
        @Nullable SeedSource seed,
        Map<String, String> hadoopConf,
        @Nullable RetentionCheck retention,
        boolean refusalAsOutput) {
      this.commit =
          new CommitSnapshot(bronzePath, position, seed, hadoopConf, retention, refusalAsOutput);
    }

    @Override
    public PCollection<Long> expand(PCollection<SnapshotFiles> files) {
      return files
          .apply("Collect data files", Combine.globally(new CollectFiles()))
          .setCoder(SnapshotFiles.coder())
          .apply("Commit all files once", ParDo.of(commit))
          .setCoder(VarLongCoder.of());
    }
  }

  /** Collects file descriptions (small elements only; no row). */
  private static final class CollectFiles
      extends Combine.CombineFn<SnapshotFiles, List<SnapshotFiles>, SnapshotFiles> {
    @Override
    public List<SnapshotFiles> createAccumulator() {
      return new ArrayList<>();
    }

    @Override
    public List<SnapshotFiles> addInput(List<SnapshotFiles> accumulator, SnapshotFiles input) {
      accumulator.add(input);
      return accumulator;
    }

    @Override
    public List<SnapshotFiles> mergeAccumulators(Iterable<List<SnapshotFiles>> accumulators) {
      List<SnapshotFiles> merged = new ArrayList<>();
      accumulators.forEach(merged::addAll);
      return merged;
    }

    @Override
    public SnapshotFiles extractOutput(List<SnapshotFiles> accumulator) {
      return SnapshotFiles.concat(accumulator);
    }

    @Override
    public Coder<List<SnapshotFiles>> getAccumulatorCoder(
        CoderRegistry registry, Coder<SnapshotFiles> inputCoder) {
      return ListCoder.of(SnapshotFiles.coder());
    }

    @Override
    public Coder<SnapshotFiles> getDefaultOutputCoder(
        CoderRegistry registry, Coder<SnapshotFiles> inputCoder) {
      return SnapshotFiles.coder();
    }
  }

  private static final class CommitSnapshot extends DoFn<SnapshotFiles, Long> {
    private final String bronzePath;
    private final StreamPosition position;
    private final @Nullable SeedSource seed;
    private final Map<String, String> hadoopConf;
    private final @Nullable RetentionCheck retention;
    private final boolean refusalAsOutput;
    private transient @Nullable DeltaTables tables;

    CommitSnapshot(
        String bronzePath,
        StreamPosition position,
        @Nullable SeedSource seed,
        Map<String, String> hadoopConf,
        @Nullable RetentionCheck retention,
        boolean refusalAsOutput) {
      this.bronzePath = bronzePath;
      this.position = position;
      this.seed = seed;
      this.hadoopConf = hadoopConf;
      this.retention = retention;
      this.refusalAsOutput = refusalAsOutput;
    }

    @Setup
    public void setup() {
      tables = DeltaTables.create(hadoopConf);
    }

    @ProcessElement
    public void process(@Element SnapshotFiles files, OutputReceiver<Long> out) {
      if (retention != null
          && committedRecord(Objects.requireNonNull(tables), bronzePath)
              .filter(r -> r.generation() >= position.generation())
              .isEmpty()) {
        try {
          retention.requireHeldAfter(position.endLsn(), bronzePath);
        } catch (DataLossError e) {
          if (!refusalAsOutput) {
            throw e;
          }
          out.output(NOT_COMMITTED);
          return;
        }
      }
      out.output(
          commit(
              Objects.requireNonNull(tables),
              bronzePath,
              position,
              files.files(),
              files.rows(),
              seed));
    }
  }

  /**
   * Commits the snapshot's files with its record and the position, unless a snapshot of the
   * position's generation (or a later one) is already recorded: the bootstrap is generation 0, a
   * re-snapshot after data loss starts generation n under app id {@code <appId>.g<n>}. Also used
   * for an empty table (no files).
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
    if (committedRecord(tables, bronzePath)
        .filter(r -> r.generation() >= position.generation())
        .isPresent()) {
      return -1;
    }
    return commitOnce(tables, bronzePath, position, files, rows, seed);
  }

  /**
   * The transaction app id of a target's one snapshot (or seed) commit of a generation, version 0:
   * {@code <appId>#snapshot}, with the generation's app id ({@code <appId>.g<n>#snapshot} for a
   * re-snapshot). Two runs that both found no snapshot and both took one race to commit; Delta
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
                snapshotJson(position.endLsn(), time, rows, seed, position.generation()),
                StreamPosition.BRONZE_DOMAIN,
                position.toJson()));
    return result.committed() ? rows : -1;
  }
}
