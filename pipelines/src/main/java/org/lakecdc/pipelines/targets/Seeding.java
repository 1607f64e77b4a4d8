package org.lakecdc.pipelines.targets;

import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.ValueConverter;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileActionCoder;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.ScanFile;
import org.lakecdc.transforms.delta.ScanFileCoder;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta.SeedSource;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta.SnapshotRecord;

/**
 * Seeds a new target from an existing copy of the source table instead of the bootstrap snapshot
 * (docs/options.md "Seeding from a copy"): {@link #check} runs every check before anything is
 * written and reads the copy; {@link #write} commits it as the target's snapshot at L, the LSN of
 * the copy's {@code as_of}, so the stream continues after L.
 *
 * <p>The launcher reads only the copy's Delta log: its schema, and the list of its data files
 * ({@link DeltaTables#scanFiles}). A Beam pipeline reads the copy: one element per data file,
 * spread over the workers, each read a Parquet batch at a time, converted and written straight to
 * bronze data files in the same step (no row crosses a shuffle or is held beyond a batch); only the
 * files' add actions travel to the one committer, which commits them all in one transaction ({@link
 * WriteSnapshotToDelta#commit}).
 */
public final class Seeding {
  private Seeding() {}

  /**
   * What {@link #check} found.
   *
   * @param lsn L: the LSN of the copy's as_of (the stamp of its rows)
   * @param commitTime the UTC commit time of L
   * @param copyNames the copy's column names by lower-case name, or null when the target already
   *     holds this seed (a rerun: nothing is read or written)
   */
  record Plan(Lsn lsn, Instant commitTime, @Nullable Map<String, String> copyNames) {
    boolean alreadySeeded() {
      return copyNames == null;
    }
  }

  /**
   * Checks the seed, in order, before anything is written: the target holding this very seed (same
   * copy, same as_of: a rerun, nothing else is checked or read); the copy's columns against the
   * job's change schema; as_of to L ({@link CdcClient#lastCommitLsnAtOrBefore}, or the LSN given);
   * the target (a rerun of the same seed, or refused); L against {@code max_lsn}; the changes right
   * after L still held (docs/architecture.md "Data flow"). Only the copy's log is read; {@link
   * #write} reads its rows.
   *
   * @return the plan; {@link Plan#alreadySeeded()} when the target holds this seed already
   * @throws IllegalArgumentException naming the option: the target holds a chunked snapshot (open
   *     or complete), the copy is no Delta table or lacks captured columns (without {@code
   *     --seedAllowMissingColumns}), the target holds another snapshot or already streams, L is
   *     after {@code max_lsn}
   * @throws DataLossError when no commit is at or before as_of (the copy is older than what CDC
   *     holds), or CDC no longer holds the changes right after L (older than the retention)
   */
  static Plan check(Target target, Schema changeSchema) {
    SeedCopy seed = target.config().seed();
    String copy = seed.table();
    Optional<SnapshotRecord> existing =
        target.exists()
            ? WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze())
            : Optional.empty();
    if (existing.isPresent()
        && new SeedSource(copy, seed.asOfText()).equals(existing.get().seed())) {
      // The same command again: the seed is found by its record, the copy is not read again
      // (it may be gone by now).
      return new Plan(existing.get().lsn(), existing.get().commitTime(), null);
    }
    // A chunked snapshot recorded for the target (open or complete) is its snapshot.
    Optional<ChunkedSnapshotFacts.State> chunked =
        target.exists() ? ChunkedSnapshot.read(target).chunked() : Optional.empty();
    if (chunked.isPresent()) {
      throw new IllegalArgumentException(
          "--seedTable "
              + copy
              + ": target "
              + target.bronze()
              + " already holds a chunked snapshot at S = "
              + chunked.get().open().s()
              + " (generation "
              + chunked.get().open().generation()
              + ", "
              + (chunked.get().complete() ? "complete" : "open")
              + "): a second snapshot is refused; run without --seedTable to go on streaming, or"
              + " seed a new target");
    }
    // 1. The copy's columns.
    if (!target.tables().exists(copy)) {
      throw new OptionRefusedException(
          "--seedTable "
              + copy
              + " is not a Delta table: pass the path or URI of a Delta table holding a copy of"
              + " the source table");
    }
    List<DeltaColumn> copyColumns;
    try {
      copyColumns = target.tables().describe(copy).columns();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "--seedTable " + copy + " cannot be read as a copy: " + CommandLine.firstLine(e), e);
    }
    Map<String, String> copyNames = new HashMap<>();
    for (DeltaColumn c : copyColumns) {
      copyNames.put(c.name().toLowerCase(Locale.ROOT), c.name());
    }
    List<ColumnSpec> captured = ChangeSchema.capturedColumns(changeSchema);
    List<String> missing = new ArrayList<>();
    for (ColumnSpec c : captured) {
      if (!copyNames.containsKey(c.name().toLowerCase(Locale.ROOT))) {
        missing.add(c.name());
      }
    }
    if (!missing.isEmpty() && !seed.allowMissingColumns()) {
      throw new IllegalArgumentException(
          "--seedTable "
              + copy
              + " lacks captured columns "
              + missing
              + " of "
              + target.captureInstance()
              + ": add them to the copy, or pass --seedAllowMissingColumns to seed them as NULL");
    }
    try (CdcClient client = target.config().clientFactory().open()) {
      // 2. as_of to L.
      Lsn l;
      if (seed.asOfLsn() != null) {
        l = seed.asOfLsn();
      } else {
        Optional<Lsn> mapped = client.lastCommitLsnAtOrBefore(seed.asOf());
        if (mapped.isEmpty()) {
          if (existing.isPresent() && !existing.get().commitTime().isAfter(seed.asOf())) {
            // A rerun after cleanup passed as_of: the seed (or snapshot) is found by its time.
            return new Plan(existing.get().lsn(), existing.get().commitTime(), null);
          }
          throw new DataLossError(
              target.captureInstance(),
              Lsn.ZERO,
              client.minLsn(target.captureInstance()),
              "--seedAsOf "
                  + seed.asOfText()
                  + ": the mapping holds no commit at or before "
                  + seed.asOfText()
                  + ": the copy is older than what CDC holds; seed a newer copy, or take a"
                  + " snapshot (--bootstrap)");
        }
        l = mapped.get();
      }
      // 3. The target: a rerun of this seed, or refused.
      if (existing.isPresent()) {
        SnapshotRecord found = existing.get();
        if (found.lsn().equals(l)) {
          return new Plan(l, found.commitTime(), null);
        }
        throw new IllegalArgumentException(
            "--seedTable "
                + copy
                + ": target "
                + target.bronze()
                + " already holds "
                + (found.seed() != null
                    ? "a seed of " + found.seed().table() + " as of " + found.seed().asOf()
                    : "a snapshot")
                + " at LSN "
                + found.lsn()
                + ", not at "
                + l
                + " (--seedAsOf "
                + seed.asOfText()
                + "): a second seed is refused; run without --seedTable to go on streaming, or"
                + " seed a new target");
      }
      if (target.exists()) {
        Optional<StreamPosition> position =
            StreamPosition.fromJson(target.bronzeDomain(StreamPosition.BRONZE_DOMAIN));
        if (position.isPresent()) {
          throw new IllegalArgumentException(
              "--seedTable seeds only a new target: "
                  + target.bronze()
                  + " already streams (position "
                  + position.get().endLsn()
                  + ") without a snapshot; seed a new target");
        }
      }
      // 4. L against max_lsn and the retention.
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty() || l.isAfter(max.get())) {
        throw new IllegalArgumentException(
            "--seedAsOf "
                + seed.asOfText()
                + ": LSN "
                + l
                + " is after sys.fn_cdc_get_max_lsn() "
                + max.map(Lsn::toString).orElse("(none yet)")
                + ": CDC has captured nothing there yet; pass an LSN the capture job has reached");
      }
      Lsn next = l.increment();
      List<CaptureInstance> instances = client.captureInstances(target.captureInstance());
      CaptureInstance holder = instances.get(0);
      for (CaptureInstance i : instances) {
        if (i.startLsn().isPresent() && !i.startLsn().get().isAfter(next)) {
          holder = i;
        }
      }
      Lsn min = client.minLsn(holder.name());
      if (next.isBefore(min)) {
        throw new DataLossError(
            holder.name(),
            next,
            min,
            "--seedAsOf "
                + seed.asOfText()
                + " = LSN "
                + l
                + ": CDC no longer holds the changes right after it (min_lsn of "
                + holder.name()
                + " is "
                + min
                + "): the copy is older than the CDC retention; seed a newer copy");
      }
      Instant time =
          client
              .lastCommitAtOrBefore(l)
              .map(Commit::commitTime)
              .orElseThrow(
                  () ->
                      new DataLossError(
                          target.captureInstance(),
                          next,
                          min,
                          "--seedAsOf "
                              + seed.asOfText()
                              + ": the mapping holds no commit at or before LSN "
                              + l
                              + ": the copy is older than what CDC holds; seed a newer copy"));
      return new Plan(l, time, copyNames);
    }
  }

  /**
   * Writes the copy to bronze in one commit, exactly like a bootstrap snapshot's ({@link
   * WriteSnapshotToDelta#commit}): op 0, {@code _start_lsn} and {@code _snapshot} = L, {@code
   * _commit_ts} = its commit time, with the snapshot record ({@code "kind": "seed"}) and the
   * position at L. A pipeline on {@code beamOptions}' runner reads the copy's data files in
   * parallel, one per element, and writes bronze's; the launcher reads no row. Prints one line.
   *
   * @return the rows written, or -1 when a snapshot was already recorded
   * @throws IllegalArgumentException naming {@code --seedTable} and the column, when a value of the
   *     copy cannot be converted to its bronze type (bronze is left without a row or a position;
   *     the next run takes its columns)
   */
  static long write(
      Target target, Schema changeSchema, Plan plan, PipelineOptions beamOptions, PrintStream out) {
    SeedCopy seed = target.config().seed();
    StreamPosition atL =
        new StreamPosition(
                target.appId(), 0, -1, plan.lsn(), plan.commitTime(), target.captureInstance())
            .ofTarget(target.bronze(), target.bronzeId());
    SeedSource source = new SeedSource(seed.table(), seed.asOfText());
    List<ScanFile> files = target.tables().scanFiles(seed.table());
    CopyFiles copy =
        new CopyFiles(
            target.bronze(),
            changeSchema,
            target.captureInstance(),
            seed.table(),
            plan.lsn().toString(),
            plan.commitTime(),
            plan.copyNames(),
            target.config().hadoopConf());
    Pipeline pipeline = Pipeline.create(beamOptions);
    copiedFiles(pipeline, seed.table(), files, copy, target.bronze())
        .apply("Collect the data files", GroupByKey.create())
        .apply("Commit the seed", ParDo.of(new CommitSeed(target, atL, source)));
    try {
      JobExit.run(pipeline);
    } catch (Pipeline.PipelineExecutionException e) {
      if (e.getCause() instanceof IllegalArgumentException refused
          && String.valueOf(refused.getMessage()).startsWith("--seedTable ")) {
        throw refused;
      }
      throw e;
    }
    long rows;
    Optional<SnapshotRecord> record =
        WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze());
    if (record.isPresent()) {
      // The pipeline committed the copy's files, unless another run's snapshot won the race.
      rows =
          source.equals(record.get().seed()) && record.get().lsn().equals(plan.lsn())
              ? record.get().rows()
              : -1;
    } else {
      // A copy without a data file: the seed is recorded without rows.
      rows =
          WriteSnapshotToDelta.commit(target.tables(), target.bronze(), atL, List.of(), 0, source);
    }
    if (rows >= 0) {
      out.printf(
          "Seeded %s from %s: %s as of %s = LSN %s (committed at %s)%n",
          target.bronze(),
          seed.table(),
          Counts.of(rows, "row", "rows"),
          seed.asOfText(),
          plan.lsn(),
          plan.commitTime());
    }
    return rows;
  }

  /**
   * The copy's reading steps: one element per data file of the copy ({@code files}), spread over
   * the workers, each read, converted and written to bronze data files by {@code copy}; the add
   * actions keyed by the bronze path, for the one committer. Each element travels in a coder of its
   * own ({@link ScanFileCoder}, {@link DataFileActionCoder}), not in Java serialization.
   *
   * @param pipeline the pipeline to add the steps to
   * @param seedTable the copy's path, for the steps' names
   * @param files the copy's data files
   * @param copy what reads a data file and writes bronze data files
   * @param bronzePath the key of every add action
   * @return the add actions keyed by {@code bronzePath}
   */
  static PCollection<KV<String, DataFileAction>> copiedFiles(
      Pipeline pipeline,
      String seedTable,
      List<ScanFile> files,
      DoFn<ScanFile, DataFileAction> copy,
      String bronzePath) {
    return pipeline
        .apply("Data files of " + seedTable, Create.of(files).withCoder(ScanFileCoder.of()))
        .apply("Spread the files over the workers", Reshuffle.viaRandomKey())
        .apply("Read, convert and write each file", ParDo.of(copy))
        .setCoder(DataFileActionCoder.of())
        .apply("One committer", WithKeys.of(bronzePath))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), DataFileActionCoder.of()));
  }

  /**
   * Reads one data file of the copy, converts its rows to bronze rows stamped with L and writes
   * them as bronze data files; outputs their add actions. Nothing is committed.
   */
  private static final class CopyFiles extends DoFn<ScanFile, DataFileAction> {
    private final String bronzePath;
    private final Schema changeSchema;
    private final String captureInstance;
    private final String copyTable;
    private final String lsn;
    private final Instant commitTime;
    private final Map<String, String> copyNames;
    private final HadoopConf hadoopConf;
    private final Counter filesRead = Metrics.counter(RunCounters.NAMESPACE, "seed_files_read");
    private transient DeltaTables tables;
    private transient Schema bronzeSchema;
    private transient List<ColumnSpec> captured;

    CopyFiles(
        String bronzePath,
        Schema changeSchema,
        String captureInstance,
        String copyTable,
        String lsn,
        Instant commitTime,
        Map<String, String> copyNames,
        HadoopConf hadoopConf) {
      this.bronzePath = bronzePath;
      this.changeSchema = changeSchema;
      this.captureInstance = captureInstance;
      this.copyTable = copyTable;
      this.lsn = lsn;
      this.commitTime = commitTime;
      this.copyNames = new HashMap<>(copyNames);
      this.hadoopConf = hadoopConf;
    }

    @Setup
    public void setup() {
      tables = hadoopConf.tables();
      bronzeSchema = BronzeTable.schema(changeSchema);
      captured = ChangeSchema.capturedColumns(changeSchema);
    }

    @ProcessElement
    public void process(@Element ScanFile file, OutputReceiver<DataFileAction> out)
        throws IOException {
      boolean commandId = ChangeSchema.hasCommandId(changeSchema);
      LocalDateTime commitTs = LocalDateTime.ofInstant(commitTime, ZoneOffset.UTC);
      try (CloseableIterator<Map<String, Object>> copyRows = tables.readScanFile(file)) {
        Iterable<Row> bronzeRows =
            () ->
                new Iterator<Row>() {
                  @Override
                  public boolean hasNext() {
                    return copyRows.hasNext();
                  }

                  @Override
                  public Row next() {
                    Row change = changeRow(copyRows.next(), commandId, commitTs);
                    return BronzeTable.toBronzeRow(bronzeSchema, change, null, lsn, null);
                  }
                };
        for (DataFileAction action : tables.writeDataFiles(bronzePath, bronzeSchema, bronzeRows)) {
          out.output(action);
        }
      }
      filesRead.inc();
    }

    private Row changeRow(Map<String, Object> copyRow, boolean commandId, LocalDateTime commitTs) {
      List<Object> values = new ArrayList<>(changeSchema.getFieldCount());
      values.add(captureInstance);
      values.add(lsn);
      values.add(null);
      values.add(MetadataColumns.OP_SNAPSHOT);
      if (commandId) {
        values.add(null);
      }
      values.add(commitTs);
      for (ColumnSpec c : captured) {
        String name = copyNames.get(c.name().toLowerCase(Locale.ROOT));
        Object value = name == null ? null : copyRow.get(name);
        try {
          values.add(ValueConverter.toBeamValue(value, c.type(), c.name()));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "--seedTable "
                  + copyTable
                  + ": column "
                  + name
                  + " cannot be converted to the bronze type of "
                  + c.name()
                  + " ("
                  + c.type()
                  + "): "
                  + CommandLine.firstLine(e),
              e);
        }
      }
      return Row.withSchema(changeSchema).addValues(values).build();
    }
  }

  /** Commits all the seed's data files in one bronze commit, with the seed's record. */
  private static final class CommitSeed extends DoFn<KV<String, Iterable<DataFileAction>>, Long> {
    private final String bronzePath;
    private final StreamPosition atL;
    private final SeedSource source;
    private final HadoopConf hadoopConf;
    private transient DeltaTables tables;

    CommitSeed(Target target, StreamPosition atL, SeedSource source) {
      this.bronzePath = target.bronze();
      this.atL = atL;
      this.source = source;
      this.hadoopConf = target.config().hadoopConf();
    }

    @Setup
    public void setup() {
      tables = hadoopConf.tables();
    }

    @ProcessElement
    public void process(
        @Element KV<String, Iterable<DataFileAction>> files, OutputReceiver<Long> out) {
      List<DataFileAction> all = new ArrayList<>();
      files.getValue().forEach(all::add);
      long rows = all.stream().mapToLong(DataFileAction::rowCount).sum();
      out.output(WriteSnapshotToDelta.commit(tables, bronzePath, atL, all, rows, source));
    }
  }
}
