package org.lakecdc.transforms.silver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.CommitSummary;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileDetail;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.FileCompaction;
import org.lakecdc.transforms.delta.ScanFile;
import org.lakecdc.transforms.delta.VacuumResult;
import org.lakecdc.transforms.history.HistoryTable;

class SilverMaintenanceTest {
  static final Schema SCHEMA =
      DeltaColumn.toBeamSchema(
          List.of(
              DeltaColumn.nullable("id", OutputType.INT, null),
              DeltaColumn.nullable("name", OutputType.STRING, null),
              DeltaColumn.required(SilverTable.START_LSN, OutputType.STRING, null),
              DeltaColumn.nullable(SilverTable.COMMIT_TS, OutputType.TIMESTAMP_NTZ, null)));

  private static final SilverMaintenance.CompactionOptions SMALL =
      new SilverMaintenance.CompactionOptions(0.2, 1024 * 1024, 100);

  @TempDir Path dir;
  private final DeltaTables tables = DeltaTables.create();
  private String path;

  @BeforeEach
  void createSilver() {
    path = dir.resolve("silver").toString();
    tables.createIfAbsent(path, SilverTable.definition(SCHEMA));
  }

  static Row row(Integer id, String name, long lsn) {
    return Row.withSchema(SCHEMA).addValues(id, name, String.format("0x%020X", lsn), null).build();
  }

  /** The table's rows as "id|name|lsn", sorted. */
  private List<String> content() {
    return content(tables.scan(path));
  }

  static List<String> content(List<Map<String, Object>> rows) {
    List<String> lines = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      lines.add(r.get("id") + "|" + r.get("name") + "|" + r.get(SilverTable.START_LSN));
    }
    lines.sort(null);
    return lines;
  }

  private List<String> read(ScanFile file) throws IOException {
    List<Map<String, Object>> rows = new ArrayList<>();
    try (var it = tables.readScanFile(file)) {
      it.forEachRemaining(rows::add);
    }
    List<String> lines = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      lines.add(r.get("id") + "|" + r.get("name"));
    }
    return lines;
  }

  private List<String> readAll(List<ScanFile> files) throws IOException {
    List<String> lines = new ArrayList<>();
    for (ScanFile file : files) {
      lines.addAll(read(file));
    }
    lines.sort(null);
    return lines;
  }

  private void append(Row... rows) {
    tables.append(path, SCHEMA, List.of(rows), null, 0, Map.of());
  }

  /** The actions of one commit file, as JSON nodes. */
  private List<JsonNode> actions(long version) throws IOException {
    List<JsonNode> actions = new ArrayList<>();
    ObjectMapper mapper = new ObjectMapper();
    for (String line :
        Files.readAllLines(Path.of(path, "_delta_log", String.format("%020d.json", version)))) {
      actions.add(mapper.readTree(line));
    }
    return actions;
  }

  @Test
  void binPacksSmallFilesIntoOneSortedFileWithoutChangingARow() throws IOException {
    // Each file sorted by key, as silver's files are; their key ranges overlap.
    append(row(2, "b", 1), row(5, "e", 1));
    append(row(null, "null key", 2), row(4, "d", 2));
    append(row(1, "a", 3), row(3, "c", 3));
    List<String> before = content();
    long versionBefore = tables.version(path);

    SilverMaintenance.CompactionResult result =
        new SilverMaintenance(tables).compact(path, List.of("ID"), SMALL);

    assertEquals(
        new SilverMaintenance.CompactionResult(true, versionBefore + 1, 3, 1, 6, 0), result);
    assertEquals(before, content());
    List<DataFileDetail> files = tables.dataFileDetails(path);
    assertEquals(1, files.size());
    assertEquals(6, files.get(0).numRecords());
    assertEquals(
        List.of("null|null key", "1|a", "2|b", "3|c", "4|d", "5|e"), read(files.get(0).scanFile()));
    List<JsonNode> actions = actions(result.version());
    long adds = actions.stream().filter(a -> a.has("add")).count();
    long removes = actions.stream().filter(a -> a.has("remove")).count();
    assertEquals(1, adds);
    assertEquals(3, removes);
    for (JsonNode action : actions) {
      JsonNode file = action.has("add") ? action.get("add") : action.get("remove");
      if (file != null) {
        assertFalse(file.get("dataChange").asBoolean(), action.toString());
      }
    }
    CommitSummary last = tables.history(path).get(tables.history(path).size() - 1);
    assertEquals("Manual Update", last.operation());
    assertEquals(null, last.txnAppId());
  }

  @Test
  void nothingToCompactCommitsNothing() {
    append(row(1, "a", 1));
    append(row(2, "b", 1));
    SilverMaintenance maintenance = new SilverMaintenance(tables);
    long version = tables.version(path);

    // Every file is at least the target size: none is small, none has deleted rows.
    assertEquals(
        new SilverMaintenance.CompactionResult(false, version, 0, 0, 0, 0),
        maintenance.compact(
            path, List.of("id"), new SilverMaintenance.CompactionOptions(0.2, 1, 100)));
    // One small file alone gains nothing from a rewrite.
    maintenance.compact(path, List.of("id"), SMALL);
    assertEquals(
        new SilverMaintenance.CompactionResult(false, version + 1, 0, 0, 0, 0),
        maintenance.compact(path, List.of("id"), SMALL));
    assertEquals(version + 1, tables.version(path));
  }

  @Test
  void binsHoldAtMostMaxFilesPerBin() {
    for (int i = 1; i <= 5; i++) {
      append(row(i, "r" + i, i));
    }
    List<String> before = content();

    SilverMaintenance.CompactionResult result =
        new SilverMaintenance(tables)
            .compact(path, List.of(), new SilverMaintenance.CompactionOptions(0.2, 1 << 20, 2));

    // Bins of 2, 2 and 1 files: the lone file is left as it is.
    assertEquals(4, result.filesRemoved());
    assertEquals(2, result.filesAdded());
    assertEquals(3, tables.dataFileDetails(path).size());
    assertEquals(before, content());
  }

  @Test
  void optionsAreChecked() {
    assertEquals(
        "deletedFractionThreshold must be in (0, 1], was 0.0",
        assertThrows(
                IllegalArgumentException.class,
                () -> new SilverMaintenance.CompactionOptions(0, 1, 2))
            .getMessage());
    assertEquals(
        "targetFileBytes must be at least 1, was 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> new SilverMaintenance.CompactionOptions(0.5, 0, 2))
            .getMessage());
    assertEquals(
        "maxFilesPerBin must be at least 2, was 1",
        assertThrows(
                IllegalArgumentException.class,
                () -> new SilverMaintenance.CompactionOptions(0.5, 1, 1))
            .getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> new SilverMaintenance(tables).compact(path, List.of("nope"), SMALL));
  }

  private List<String> dataFilesOnDisk() throws IOException {
    try (Stream<Path> files = Files.list(Path.of(path))) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".parquet") || n.endsWith(".bin"))
          .sorted()
          .toList();
    }
  }

  private static String name(String uri) {
    return Path.of(URI.create(uri)).getFileName().toString();
  }

  private long logFiles() throws IOException {
    try (Stream<Path> files = Files.list(Path.of(path, "_delta_log"))) {
      return files.count();
    }
  }

  @Test
  void vacuumDeletesWhatNoRetainedVersionReadsAndKeepsTheRest() throws IOException {
    append(row(1, "a", 1));
    append(row(2, "b", 1));
    List<ScanFile> beforeCompaction = tables.scanFiles(path);
    List<String> removed =
        tables.dataFileDetails(path).stream().map(f -> name(f.path())).sorted().toList();
    new SilverMaintenance(tables).compact(path, List.of("id"), SMALL);
    List<DataFileAction> orphan = tables.writeDataFiles(path, SCHEMA, List.of(row(9, "x", 9)));
    Files.writeString(Path.of(path, "notes.txt"), "not a data file");
    long logFiles = logFiles();
    String kept = name(tables.dataFileDetails(path).get(0).path());

    // Within the retention: the tombstones are younger than 7 days, the orphan too.
    VacuumResult retained =
        new SilverMaintenance(tables).vacuum(path, SilverMaintenance.DEFAULT_RETENTION, false);
    assertEquals(List.of(), retained.files());
    assertEquals(4, retained.filesKept());
    assertEquals(List.of("1|a", "2|b"), readAll(beforeCompaction));

    // A day later with a retention of an hour: everything not in the latest version goes.
    SilverMaintenance later =
        new SilverMaintenance(
            tables, Clock.fixed(Instant.now().plus(Duration.ofDays(1)), ZoneOffset.UTC));
    VacuumResult dryRun = later.vacuum(path, Duration.ofHours(1), true);
    List<String> expected = new ArrayList<>(removed);
    expected.add(name(orphan.get(0).path()));
    expected.sort(null);
    assertTrue(dryRun.dryRun());
    assertEquals(expected, dryRun.files().stream().map(SilverMaintenanceTest::name).toList());
    assertEquals(4, dataFilesOnDisk().size());

    VacuumResult vacuumed = later.vacuum(path, Duration.ofHours(1), false);
    assertEquals(dryRun.files(), vacuumed.files());
    assertEquals(1, vacuumed.filesKept());
    assertEquals(List.of(kept), dataFilesOnDisk());
    assertTrue(Files.exists(Path.of(path, "notes.txt")));
    assertEquals(logFiles, logFiles());
    assertEquals(List.of("1|a|0x00000000000000000001", "2|b|0x00000000000000000001"), content());
    assertThrows(RuntimeException.class, () -> readAll(beforeCompaction));
  }

  private long txn;

  /** One wave through the engine: upserts of (id, name) at this LSN, deletes of these ids. */
  private WaveResult wave(
      SilverMerge merge, long lsn, Map<Integer, String> upserts, Integer... deletes) {
    List<SilverImage> images = new ArrayList<>();
    upserts.forEach((id, name) -> images.add(SilverImage.upsert(row(id, name, lsn))));
    for (Integer id : deletes) {
      images.add(SilverImage.delete(row(id, null, lsn)));
    }
    return merge.merge(path, List.of("id"), images, "lakecdc-silver", ++txn, Map.of());
  }

  private static Map<Integer, String> names(int from, int to, String prefix) {
    Map<Integer, String> names = new java.util.LinkedHashMap<>();
    for (int i = from; i <= to; i++) {
      names.put(i, prefix + i);
    }
    return names;
  }

  private List<String> expected(Map<Integer, String> model, Map<Integer, Long> lsns) {
    List<String> lines = new ArrayList<>();
    model.forEach(
        (id, name) -> lines.add(id + "|" + name + "|" + String.format("0x%020X", lsns.get(id))));
    lines.sort(null);
    return lines;
  }

  private long deletionVectorFilesOnDisk() throws IOException {
    return dataFilesOnDisk().stream().filter(n -> n.startsWith("deletion_vector_")).count();
  }

  @Test
  void rewritesFilesWhoseDeletedFractionPassesTheThresholdAndMoreWavesStayCorrect()
      throws IOException {
    SilverMerge merge = new SilverMerge(tables);
    Map<Integer, String> model = new java.util.TreeMap<>();
    Map<Integer, Long> lsns = new java.util.HashMap<>();
    wave(merge, 1, names(1, 10, "a"));
    model.putAll(names(1, 10, "a"));
    names(1, 10, "a").keySet().forEach(id -> lsns.put(id, 1L));
    // Wave 2 replaces 3 of the 10 rows of the first file (30% deleted) and deletes 1 more.
    wave(merge, 2, Map.of(1, "b1", 2, "b2", 3, "b3"), 4);
    model.putAll(Map.of(1, "b1", 2, "b2", 3, "b3"));
    model.remove(4);
    List.of(1, 2, 3).forEach(id -> lsns.put(id, 2L));
    List<String> before = content();
    assertEquals(expected(model, lsns), before);
    List<DataFileDetail> files = tables.dataFileDetails(path);
    assertEquals(2, files.size());
    assertEquals(
        List.of(4L, 0L),
        files.stream()
            .map(DataFileDetail::deletedRows)
            .sorted(java.util.Comparator.reverseOrder())
            .toList());

    // Threshold 0.5: the first file (40% deleted) is large enough to stay, nothing to do.
    SilverMaintenance maintenance = new SilverMaintenance(tables);
    SilverMaintenance.CompactionOptions big = new SilverMaintenance.CompactionOptions(0.5, 1, 100);
    assertFalse(maintenance.compact(path, List.of("id"), big).committed());
    // Threshold 0.2 with every file "large": only the first file is rewritten, alone.
    SilverMaintenance.CompactionResult result =
        maintenance.compact(
            path, List.of("id"), new SilverMaintenance.CompactionOptions(0.2, 1, 100));

    assertEquals(
        new SilverMaintenance.CompactionResult(true, result.version(), 1, 1, 6, 4), result);
    assertEquals(before, content());
    files = tables.dataFileDetails(path);
    assertEquals(2, files.size());
    assertEquals(List.of(0L, 0L), files.stream().map(DataFileDetail::deletedRows).toList());
    assertEquals(List.of(3L, 6L), files.stream().map(DataFileDetail::numRecords).sorted().toList());

    // Waves after compaction: the engine finds the keys in the compacted file.
    wave(merge, 3, Map.of(5, "c5", 11, "c11"), 6, 1);
    model.put(5, "c5");
    model.put(11, "c11");
    model.remove(6);
    model.remove(1);
    lsns.put(5, 3L);
    lsns.put(11, 3L);
    wave(merge, 4, Map.of(6, "d6", 4, "d4"));
    model.put(6, "d6");
    model.put(4, "d4");
    lsns.put(6, 4L);
    lsns.put(4, 4L);
    assertEquals(expected(model, lsns), content());

    // Bin-packing everything (small target 1 MiB) leaves one file, no vector, same rows.
    result = maintenance.compact(path, List.of("id"), SMALL);
    assertEquals(4, result.filesRemoved());
    assertEquals(1, result.filesAdded());
    assertEquals(model.size(), result.rowsWritten());
    assertEquals(expected(model, lsns), content());
    files = tables.dataFileDetails(path);
    assertEquals(1, files.size());
    assertEquals(0, files.get(0).deletedRows());
    assertEquals(null, files.get(0).deletionVectorPath());

    // Vacuum a day later: only the one data file remains on disk, no vector file.
    assertTrue(deletionVectorFilesOnDisk() > 0);
    SilverMaintenance later =
        new SilverMaintenance(
            tables, Clock.fixed(Instant.now().plus(Duration.ofDays(1)), ZoneOffset.UTC));
    later.vacuum(path, Duration.ofHours(1), false);
    assertEquals(List.of(name(files.get(0).path())), dataFilesOnDisk());
    assertEquals(expected(model, lsns), content());

    // And the engine goes on.
    wave(merge, 5, Map.of(2, "e2"), 3);
    model.put(2, "e2");
    model.remove(3);
    lsns.put(2, 5L);
    assertEquals(expected(model, lsns), content());
  }

  @Test
  void aWaveCommittedDuringCompactionMakesItFailWithNothingVisible() {
    SilverMerge merge = new SilverMerge(tables);
    wave(merge, 1, names(1, 4, "a"));
    wave(merge, 2, Map.of(1, "b1"), 2);
    SilverMaintenance maintenance = new SilverMaintenance(tables);
    long[] waveVersion = new long[1];

    assertThrows(
        org.lakecdc.transforms.delta.DeltaConflictException.class,
        () ->
            maintenance.compact(
                path,
                List.of("id"),
                SMALL,
                () -> waveVersion[0] = wave(merge, 3, Map.of(3, "c3"), 4).version()));

    assertEquals(waveVersion[0], tables.version(path));
    assertEquals(List.of("1|b1|0x00000000000000000002", "3|c3|0x00000000000000000003"), content());
    assertEquals(3, tables.dataFileDetails(path).size());
    // Listed again, it compacts.
    SilverMaintenance.CompactionResult result = maintenance.compact(path, List.of("id"), SMALL);
    assertEquals(3, result.filesRemoved());
    assertEquals(2, result.rowsWritten());
    wave(merge, 4, Map.of(1, "d1", 2, "d2"));
    assertEquals(
        List.of(
            "1|d1|0x00000000000000000004",
            "2|d2|0x00000000000000000004",
            "3|c3|0x00000000000000000003"),
        content());
  }

  @Test
  void wavesAndCompactionsCrossACheckpoint() {
    SilverMerge merge = new SilverMerge(tables);
    SilverMaintenance maintenance = new SilverMaintenance(tables);
    for (int lsn = 1; lsn <= 6; lsn++) {
      wave(merge, lsn, Map.of(lsn % 3, "v" + lsn));
      maintenance.compact(path, List.of("id"), SMALL);
    }
    assertTrue(tables.version(path) >= 10, "version " + tables.version(path));
    assertTrue(
        Files.exists(Path.of(path, "_delta_log", String.format("%020d.checkpoint.parquet", 10))));
    assertEquals(
        List.of(
            "0|v6|0x00000000000000000006",
            "1|v4|0x00000000000000000004",
            "2|v5|0x00000000000000000005"),
        content());
    assertEquals(1, tables.dataFileDetails(path).size());
  }

  @Test
  void vacuumKeepsTheTombstonesRemovedAtOrAfterTheCutoff() throws IOException {
    append(row(1, "a", 1));
    append(row(2, "b", 1));
    SilverMaintenance maintenance = new SilverMaintenance(tables);
    maintenance.compact(path, List.of("id"), SMALL);
    List<String> firstFiles = tables.dataFileDetails(path).stream().map(f -> f.path()).toList();
    append(row(3, "c", 2));
    long versionInForce = tables.version(path);
    List<ScanFile> retainedVersion = tables.scanFiles(path);
    long cutoff = tables.history(path).get((int) versionInForce).timestampMillis() + 1;
    while (System.currentTimeMillis() <= cutoff) {
      Thread.onSpinWait();
    }
    maintenance.compact(path, List.of("id"), SMALL);

    // Cutoff after the first compaction's removes, before the second's.
    VacuumResult result =
        new SilverMaintenance(tables, Clock.fixed(Instant.ofEpochMilli(cutoff), ZoneOffset.UTC))
            .vacuum(path, Duration.ZERO, false);

    assertEquals(2, result.files().size());
    assertEquals(3, result.filesKept());
    assertFalse(result.files().stream().anyMatch(f -> firstFiles.contains(f)));
    assertEquals(List.of("1|a", "2|b", "3|c"), readAll(retainedVersion));
    assertEquals(
        List.of(
            "1|a|0x00000000000000000001",
            "2|b|0x00000000000000000001",
            "3|c|0x00000000000000000002"),
        content());
  }

  /** A history's row of key {@code id}: current when {@code validTo} is null, else closed. */
  private static Row version(Schema schema, int id, String name, long validFrom, Long validTo) {
    return Row.withSchema(schema)
        .addValues(
            id,
            name,
            String.format("0x%020X", validFrom),
            null,
            validTo == null ? null : String.format("0x%020X", validTo),
            null,
            false,
            null,
            null,
            0,
            null)
        .build();
  }

  @Test
  void historyCompactionNeverPacksClosedAndCurrentVersionsIntoOneFile() throws IOException {
    Schema bronze =
        DeltaColumn.toBeamSchema(
            List.of(
                DeltaColumn.nullable("id", OutputType.INT, null),
                DeltaColumn.nullable("name", OutputType.STRING, null)));
    Schema schema = HistoryTable.schema(bronze);
    String history = dir.resolve("history").toString();
    tables.createIfAbsent(
        history, HistoryTable.definition(schema, "bronze", List.of("dbo_t"), List.of()));
    // Six files, two of each kind: closed, current, mixed, closed, current, mixed.
    List<List<Row>> files =
        List.of(
            List.of(version(schema, 1, "a1", 1, 2L), version(schema, 2, "b1", 1, 3L)),
            List.of(version(schema, 1, "a2", 2, null)),
            List.of(version(schema, 5, "e1", 1, 2L), version(schema, 5, "e2", 2, null)),
            List.of(version(schema, 2, "b2", 3, 4L)),
            List.of(version(schema, 2, "b3", 4, null), version(schema, 3, "c1", 4, null)),
            List.of(version(schema, 6, "f1", 1, null), version(schema, 7, "g1", 1, 5L)));
    for (List<Row> rows : files) {
      tables.append(history, schema, rows, null, 0, Map.of());
    }
    assertEquals(
        List.of("CLOSED", "CLOSED", "CURRENT", "CURRENT", "MIXED", "MIXED"),
        tables.dataFileDetails(history).stream()
            .map(f -> String.valueOf(HistoryTable.fileKind(f)))
            .sorted()
            .toList());
    // Statistics that do not cover _valid_to_lsn (a history of more than 29 captured columns):
    // packed with the mixed files, so such files never pile up one per wave.
    org.lakecdc.transforms.delta.DataFileDetail closed = tables.dataFileDetails(history).get(0);
    assertEquals(
        HistoryTable.FileKind.MIXED,
        HistoryTable.fileKind(
            new org.lakecdc.transforms.delta.DataFileDetail(
                closed.scanFile(),
                closed.path(),
                closed.sizeBytes(),
                closed.modificationTimeMillis(),
                closed.numRecords(),
                closed.deletedRows(),
                closed.deletionVectorPath(),
                Map.of())));
    long before = tables.version(history);

    SilverMaintenance.CompactionResult result =
        new SilverMaintenance(tables).compact(history, List.of(), SMALL, HistoryTable::fileKind);

    // One output per kind, each written from the two files of its kind.
    assertEquals(new SilverMaintenance.CompactionResult(true, before + 1, 6, 3, 10, 0), result);
    List<String> outputs = new ArrayList<>();
    for (DataFileDetail file : tables.dataFileDetails(history)) {
      List<String> rows = new ArrayList<>();
      try (var it = tables.readScanFile(file.scanFile())) {
        it.forEachRemaining(r -> rows.add(r.get("name") + "|" + r.get(HistoryTable.VALID_TO_LSN)));
      }
      rows.sort(null);
      outputs.add(HistoryTable.fileKind(file) + " " + rows);
    }
    outputs.sort(null);
    assertEquals(
        List.of(
            "CLOSED [a1|0x00000000000000000002, b1|0x00000000000000000003,"
                + " b2|0x00000000000000000004]",
            "CURRENT [a2|null, b3|null, c1|null]",
            "MIXED [e1|0x00000000000000000002, e2|null, f1|null, g1|0x00000000000000000005]"),
        outputs);
    // The outputs keep their kinds: a second compaction finds one file of each, nothing to pack.
    assertEquals(
        new SilverMaintenance.CompactionResult(false, before + 1, 0, 0, 0, 0),
        new SilverMaintenance(tables).compact(history, List.of(), SMALL, HistoryTable::fileKind));
  }

  @Test
  void filesOfNoKnownKindAreRewrittenOnlyAlone() {
    append(row(1, "a", 1));
    append(row(2, "b", 2));
    FileCompaction.Limits limits = SMALL.limits();
    List<DataFileDetail> files = tables.dataFileDetails(path);

    assertEquals(List.of(files), FileCompaction.bins(files, limits));
    assertEquals(List.of(), FileCompaction.bins(files, limits, file -> null));
    assertEquals(List.of(), FileCompaction.bins(files, limits, file -> file.path()));
    assertEquals(List.of(files), FileCompaction.bins(files, limits, file -> "one kind"));
  }
}
