package org.lakecdc.transforms.silver;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableKind;

/**
 * The MERGE engine against Kernel's own reader ({@link DeltaTables#scan}, which applies deletion
 * vectors): after every wave the table equals a model map of key to row, exactly.
 */
class SilverMergeTest {
  private static final String APP = "lakecdc-silver";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  /** Bronze of a table (id BIGINT, name STRING); id nullable so that NULL is a key. */
  static final Schema BRONZE =
      DeltaColumn.toBeamSchema(
          List.of(
              DeltaColumn.required("_capture_instance", OutputType.STRING, null),
              DeltaColumn.required("_start_lsn", OutputType.STRING, null),
              DeltaColumn.nullable("_seqval", OutputType.STRING, null),
              DeltaColumn.required("_operation", OutputType.INT, null),
              DeltaColumn.nullable("_command_id", OutputType.INT, null),
              DeltaColumn.nullable("_commit_ts", OutputType.TIMESTAMP_NTZ, null),
              DeltaColumn.nullable("id", OutputType.BIGINT, null),
              DeltaColumn.nullable("name", OutputType.STRING, null),
              DeltaColumn.nullable("_batch_id", OutputType.INT, null),
              DeltaColumn.nullable("_snapshot", OutputType.STRING, null),
              DeltaColumn.nullable("_chunk", OutputType.INT, null)));

  static final Schema SILVER = SilverTable.schema(BRONZE);

  static String lsn(long n) {
    return String.format("0x%020X", n);
  }

  static LocalDateTime ts(long n) {
    return LocalDateTime.of(2026, 12, 1, 0, 0).plusSeconds(n);
  }

  static SilverImage upsert(Long id, String name, long lsn) {
    return SilverImage.upsert(
        Row.withSchema(SILVER).addValues(id, name, lsn(lsn), ts(lsn)).build());
  }

  static SilverImage delete(Long id, long lsn) {
    return SilverImage.delete(
        Row.withSchema(SILVER).addValues(id, null, lsn(lsn), ts(lsn)).build());
  }

  /** The model: key to (id, name, _start_lsn, _commit_ts). */
  private final Map<List<Object>, List<Object>> model = new HashMap<>();

  private void put(Long id, String name, long lsn) {
    model.put(Arrays.asList(id), Arrays.asList(id, name, lsn(lsn), ts(lsn)));
  }

  private String silver(String name) {
    String path = dir.resolve(name).toString();
    tables.createIfAbsent(path, SilverTable.definition(SILVER));
    return path;
  }

  private static final Comparator<List<Object>> BY_TEXT = Comparator.comparing(Object::toString);

  private void assertTableEqualsModel(DeltaTables reader, String path) {
    List<List<Object>> actual =
        reader.scan(path).stream()
            .map(
                r ->
                    Arrays.asList(
                        r.get("id"), r.get("name"), r.get("_start_lsn"), r.get("_commit_ts")))
            .sorted(BY_TEXT)
            .collect(Collectors.toList());
    List<List<Object>> expected =
        model.values().stream().sorted(BY_TEXT).collect(Collectors.toList());
    assertEquals(expected, actual);
  }

  private static WaveResult committed(long version, long ins, long upd, long del, int files) {
    return new WaveResult(CommitResult.Status.COMMITTED, version, ins, upd, del, files);
  }

  /**
   * A wave's parts add up to its images: the images that changed nothing are named (silver held
   * them as new already; deletes of keys silver did not hold), counts with thousands separators.
   */
  @Test
  void aWavesPartsAddUpToItsImages() {
    assertEquals(
        "106 inserted, 0 updated, 0 deleted, 189 already current",
        new WaveResult(CommitResult.Status.COMMITTED, 4, 106, 0, 0, 1, 189, 0).parts(295));
    assertEquals(
        "225 inserted, 0 updated, 0 deleted, 20 already absent",
        new WaveResult(CommitResult.Status.COMMITTED, 4, 225, 0, 0, 0, 0, 20).parts(245));
    assertEquals(
        "106 inserted, 157 updated, 32 deleted",
        new WaveResult(CommitResult.Status.COMMITTED, 3, 106, 157, 32, 2, 0, 0).parts(295));
    assertEquals(
        "12,000 inserted, 1,500 updated, 0 deleted, 1,001 already current",
        new WaveResult(CommitResult.Status.COMMITTED, 3, 12_000, 1_500, 0, 2, 1_001, 0)
            .parts(14_501));
    assertEquals(
        "already committed",
        new WaveResult(CommitResult.Status.ALREADY_COMMITTED, 3, 0, 0, 0, 0).parts(7));
  }

  @Test
  void silverIsCreatedWithDeletionVectorsAtReader3Writer7() throws IOException {
    String path = silver("protocol");
    JsonNode protocol = null;
    for (String line :
        Files.readAllLines(dir.resolve("protocol/_delta_log/00000000000000000000.json"))) {
      JsonNode action = JSON.readTree(line);
      if (action.has("protocol")) {
        protocol = action.get("protocol");
      }
    }
    assertEquals(3, protocol.get("minReaderVersion").asInt());
    assertEquals(7, protocol.get("minWriterVersion").asInt());
    assertThat(texts(protocol.get("readerFeatures")), hasItem("deletionVectors"));
    assertThat(texts(protocol.get("writerFeatures")), hasItem("deletionVectors"));
    Map<String, String> properties = tables.describe(path).properties();
    assertEquals("true", properties.get("delta.enableDeletionVectors"));
    assertEquals("silver", properties.get("mssql_cdc.table_kind"));
    assertFalse(properties.containsKey("delta.enableChangeDataFeed"));
    assertFalse(properties.containsKey("delta.enableRowTracking"));
    assertEquals(TableKind.SILVER.tableComment(), tables.describe(path).description());
    // Kernel still appends to it.
    CommitResult append =
        tables.append(path, SILVER, List.of(upsert(1L, "a", 1).row()), null, 0, Map.of());
    assertTrue(append.committed());
    assertEquals(1, tables.scan(path).size());
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  @Test
  void schemaIsCapturedColumnsThenStartLsnAndCommitTs() {
    assertEquals(List.of("id", "name"), SilverTable.capturedColumns(BRONZE));
    assertEquals(List.of("id", "name", "_start_lsn", "_commit_ts"), SILVER.getFieldNames());
    assertFalse(SILVER.getField("_start_lsn").getType().getNullable());
    assertTrue(SILVER.getField("_commit_ts").getType().getNullable());
    assertTrue(SILVER.getField("id").getType().getNullable());
  }

  @Test
  void wavesOfUpdatesDeletesReinsertsNullKeysAndStaleImagesMatchTheModel() throws IOException {
    String path = silver("waves");
    SilverMerge merge = new SilverMerge(tables);
    long v = tables.version(path);

    WaveResult first =
        merge.merge(
            path,
            List.of("id"),
            List.of(
                upsert(1L, "a", 10),
                upsert(2L, "b", 10),
                upsert(3L, "c", 10),
                upsert(null, "n", 10)),
            APP,
            1,
            Map.of("mssql_cdc.silver", "{\"wave\":1}"));
    assertEquals(committed(v + 1, 4, 0, 0, 0), first);
    put(1L, "a", 10);
    put(2L, "b", 10);
    put(3L, "c", 10);
    put(null, "n", 10);
    assertTableEqualsModel(tables, path);

    // Update 1 and NULL, delete 2, delete an absent key, a stale image of 3.
    WaveResult second =
        merge.merge(
            path,
            List.of("ID"),
            List.of(
                upsert(1L, "a2", 20),
                delete(2L, 20),
                delete(9L, 20),
                upsert(3L, "stale", 5),
                upsert(null, "n2", 20)),
            APP,
            2,
            Map.of("mssql_cdc.silver", "{\"wave\":2}"));
    // 5 images: 2 updated, 1 deleted, the stale 3 already current, the absent 9 already absent.
    assertEquals(new WaveResult(CommitResult.Status.COMMITTED, v + 2, 0, 2, 1, 1, 1, 1), second);
    assertEquals(
        "0 inserted, 2 updated, 1 deleted, 1 already current, 1 already absent", second.parts(5));
    put(1L, "a2", 20);
    model.remove(Arrays.asList(2L));
    put(null, "n2", 20);
    assertTableEqualsModel(tables, path);
    assertEquals(Optional.of("{\"wave\":2}"), tables.domainMetadata(path, "mssql_cdc.silver"));
    assertEquals(OptionalLong.of(2), tables.latestTransactionVersion(path, APP));

    // The commit: remove of the first file, add of it with a "u" vector of 3 rows and loose
    // bounds, and one new file of 2 rows.
    List<JsonNode> actions = new ArrayList<>();
    for (String line :
        Files.readAllLines(dir.resolve(String.format("waves/_delta_log/%020d.json", v + 2)))) {
      actions.add(JSON.readTree(line));
    }
    List<JsonNode> removes =
        actions.stream().filter(a -> a.has("remove")).map(a -> a.get("remove")).toList();
    List<JsonNode> adds =
        actions.stream().filter(a -> a.has("add")).map(a -> a.get("add")).toList();
    assertEquals(1, removes.size());
    assertEquals(2, adds.size());
    JsonNode withVector =
        adds.stream().filter(a -> a.hasNonNull("deletionVector")).findFirst().get();
    assertEquals(removes.get(0).get("path").asText(), withVector.get("path").asText());
    assertFalse(removes.get(0).hasNonNull("deletionVector"));
    JsonNode dv = withVector.get("deletionVector");
    assertEquals("u", dv.get("storageType").asText());
    assertEquals(20, dv.get("pathOrInlineDv").asText().length());
    assertEquals(1, dv.get("offset").asInt());
    assertEquals(3, dv.get("cardinality").asLong());
    JsonNode stats = JSON.readTree(withVector.get("stats").asText());
    assertFalse(stats.get("tightBounds").asBoolean());
    assertEquals(4, stats.get("numRecords").asLong());
    JsonNode newFile = adds.stream().filter(a -> !a.hasNonNull("deletionVector")).findFirst().get();
    assertEquals(2, JSON.readTree(newFile.get("stats").asText()).get("numRecords").asLong());
    long vectorFiles;
    try (var files = Files.list(dir.resolve("waves"))) {
      vectorFiles =
          files.filter(f -> f.getFileName().toString().startsWith("deletion_vector_")).count();
    }
    assertEquals(1, vectorFiles);

    // Re-insert the deleted key, update 1 again (now in the second file), insert 4; update 3,
    // whose file already has a vector (its old positions must stay deleted).
    WaveResult third =
        merge.merge(
            path,
            List.of("id"),
            List.of(
                upsert(2L, "b3", 30),
                upsert(1L, "a3", 30),
                upsert(4L, "d", 30),
                upsert(3L, "c3", 30)),
            APP,
            3,
            Map.of("mssql_cdc.silver", "{\"wave\":3}"));
    assertEquals(committed(v + 3, 2, 2, 0, 2), third);
    // The first file's remove carries its old vector (3 rows); its new add the union (4 rows).
    JsonNode removeOfFirst = null;
    JsonNode addOfFirst = null;
    for (String line :
        Files.readAllLines(dir.resolve(String.format("waves/_delta_log/%020d.json", v + 3)))) {
      JsonNode action = JSON.readTree(line);
      if (action.has("remove")
          && action.get("remove").get("path").asText().equals(withVector.get("path").asText())) {
        removeOfFirst = action.get("remove");
      }
      if (action.has("add")
          && action.get("add").get("path").asText().equals(withVector.get("path").asText())) {
        addOfFirst = action.get("add");
      }
    }
    assertEquals(dv, removeOfFirst.get("deletionVector"));
    assertEquals(4, addOfFirst.get("deletionVector").get("cardinality").asLong());
    put(2L, "b3", 30);
    put(1L, "a3", 30);
    put(4L, "d", 30);
    put(3L, "c3", 30);
    assertTableEqualsModel(tables, path);

    // A replay of the same transaction: nothing written.
    List<SilverImage> thirdAgain = List.of(upsert(2L, "b3", 30), upsert(1L, "a3", 30));
    assertEquals(
        new WaveResult(CommitResult.Status.ALREADY_COMMITTED, v + 3, 0, 0, 0, 0),
        merge.merge(
            path, List.of("id"), thirdAgain, APP, 3, Map.of("mssql_cdc.silver", "{\"wave\":3}")));
    // The same images under a new transaction with the same position: nothing to do, no commit.
    assertEquals(
        new WaveResult(CommitResult.Status.ALREADY_COMMITTED, v + 3, 0, 0, 0, 0),
        merge.merge(
            path, List.of("id"), thirdAgain, APP, 4, Map.of("mssql_cdc.silver", "{\"wave\":3}")));
    assertEquals(v + 3, tables.version(path));
    // ... and with a new position: only the transaction and the position are committed; both
    // images are already current.
    assertEquals(
        new WaveResult(CommitResult.Status.COMMITTED, v + 4, 0, 0, 0, 0, 2, 0),
        merge.merge(
            path, List.of("id"), thirdAgain, APP, 4, Map.of("mssql_cdc.silver", "{\"wave\":4}")));
    assertEquals(Optional.of("{\"wave\":4}"), tables.domainMetadata(path, "mssql_cdc.silver"));
    assertTableEqualsModel(tables, path);
    // A fresh reader (no cached snapshot) sees the same.
    assertTableEqualsModel(DeltaTables.create(), path);
    assertEquals(1, merge.keyScans());
  }

  @Test
  void duplicateKeysInAWaveAreRefused() {
    String path = silver("dup");
    SilverMerge merge = new SilverMerge(tables);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                merge.merge(
                    path,
                    List.of("id"),
                    List.of(upsert(null, "x", 1), delete(null, 2)),
                    APP,
                    1,
                    Map.of()));
    assertThat(
        e.getMessage(),
        startsWith("Silver " + path + ": two images of one wave have the same key {id=null}"));
    IllegalArgumentException unknown =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                merge.merge(path, List.of("nope"), List.of(upsert(1L, "x", 1)), APP, 1, Map.of()));
    assertThat(unknown.getMessage(), startsWith("Silver " + path + " has no key column 'nope'"));
    assertEquals(1, tables.version(path));
  }

  @Test
  void aWaveThatLosesToAConcurrentCommitThrowsAndWritesNothingVisible() {
    String path = silver("conflict");
    SilverMerge merge = new SilverMerge(tables);
    merge.merge(
        path,
        List.of("id"),
        List.of(upsert(1L, "a", 10), upsert(2L, "b", 10)),
        APP,
        1,
        Map.of("d", "1"));
    put(1L, "a", 10);
    put(2L, "b", 10);
    DeltaTables other = DeltaTables.create();
    merge.beforeCommit(
        () ->
            other.append(
                path, SILVER, List.of(upsert(7L, "other", 15).row()), "someone", 1, Map.of()));
    assertThrows(
        DeltaConflictException.class,
        () ->
            merge.merge(
                path,
                List.of("id"),
                List.of(upsert(1L, "a2", 20), delete(2L, 20)),
                APP,
                2,
                Map.of("d", "2")));
    put(7L, "other", 15);
    assertTableEqualsModel(tables, path);
    assertEquals(Optional.of("1"), tables.domainMetadata(path, "d"));
    assertEquals(OptionalLong.of(1), tables.latestTransactionVersion(path, APP));
    // Retried on the new version, the wave applies.
    merge.beforeCommit(() -> {});
    assertEquals(
        committed(tables.version(path) + 1, 0, 1, 1, 1),
        merge.merge(
            path,
            List.of("id"),
            List.of(upsert(1L, "a2", 20), delete(2L, 20)),
            APP,
            2,
            Map.of("d", "2")));
    put(1L, "a2", 20);
    model.remove(Arrays.asList(2L));
    assertTableEqualsModel(tables, path);
  }

  @Test
  void manyWavesCrossAKernelCheckpoint() {
    String path = silver("checkpoint");
    SilverMerge merge = new SilverMerge(tables);
    List<SilverImage> seed = new ArrayList<>();
    for (long id = 0; id < 50; id++) {
      seed.add(upsert(id, "v0", 1));
      put(id, "v0", 1);
    }
    merge.merge(path, List.of("id"), seed, APP, 1, Map.of());
    for (int wave = 2; wave <= 14; wave++) {
      List<SilverImage> images = new ArrayList<>();
      for (long id = wave; id < 50; id += 3 + wave % 4) {
        if ((id + wave) % 5 == 0) {
          images.add(delete(id, wave * 10L));
          model.remove(Arrays.asList(id));
        } else {
          images.add(upsert(id, "v" + wave, wave * 10L));
          put(id, "v" + wave, wave * 10L);
        }
      }
      images.add(upsert(100L + wave, "new" + wave, wave * 10L));
      put(100L + wave, "new" + wave, wave * 10L);
      assertTrue(merge.merge(path, List.of("id"), images, APP, wave, Map.of()).committed());
      assertTableEqualsModel(tables, path);
    }
    assertTrue(
        Files.exists(dir.resolve("checkpoint/_delta_log/00000000000000000010.checkpoint.parquet")));
    assertTableEqualsModel(DeltaTables.create(), path);
    assertEquals(1, merge.keyScans());
    // A new engine rebuilds its index from the checkpointed table and keeps merging correctly.
    SilverMerge fresh = new SilverMerge(DeltaTables.create());
    fresh.merge(
        path,
        List.of("id"),
        List.of(upsert(5L, "fresh", 1000), delete(7L, 1000)),
        APP,
        15,
        Map.of());
    put(5L, "fresh", 1000);
    model.remove(Arrays.asList(7L));
    assertTableEqualsModel(DeltaTables.create(), path);
  }

  @Test
  void theIndexIsRebuiltAfterAnotherInstancesCommit() {
    String path = silver("stale");
    SilverMerge a = new SilverMerge(tables);
    SilverMerge b = new SilverMerge(DeltaTables.create());
    a.merge(
        path, List.of("id"), List.of(upsert(1L, "a", 10), upsert(2L, "b", 10)), APP, 1, Map.of());
    assertEquals(1, a.keyScans());
    assertEquals(2, a.indexedKeys(path));
    a.merge(path, List.of("id"), List.of(upsert(3L, "c", 20)), APP, 2, Map.of());
    assertEquals(1, a.keyScans());
    assertEquals(3, a.indexedKeys(path));
    // B moves key 1's row to a new file.
    b.merge(path, List.of("id"), List.of(upsert(1L, "b-wrote", 30)), APP, 3, Map.of());
    // A's index points at key 1's old row; the version tells it to rescan.
    assertEquals(
        committed(tables.version(path) + 1, 0, 1, 0, 1),
        a.merge(path, List.of("id"), List.of(upsert(1L, "a-wrote", 40)), APP, 4, Map.of()));
    assertEquals(2, a.keyScans());
    put(1L, "a-wrote", 40);
    put(2L, "b", 10);
    put(3L, "c", 20);
    assertTableEqualsModel(tables, path);
  }

  @Test
  void aboveTheCapNoIndexIsKeptAndEveryWaveScans() {
    String path = silver("cap");
    SilverMerge merge = new SilverMerge(tables, 2);
    merge.merge(
        path,
        List.of("id"),
        List.of(upsert(1L, "a", 10), upsert(2L, "b", 10), upsert(3L, "c", 10)),
        APP,
        1,
        Map.of());
    assertEquals(-1, merge.indexedKeys(path));
    merge.merge(
        path, List.of("id"), List.of(upsert(2L, "b2", 20), delete(3L, 20)), APP, 2, Map.of());
    merge.merge(
        path, List.of("id"), List.of(upsert(3L, "c3", 30), upsert(1L, "a3", 30)), APP, 3, Map.of());
    assertEquals(3, merge.keyScans());
    assertEquals(-1, merge.indexedKeys(path));
    put(1L, "a3", 30);
    put(2L, "b2", 20);
    put(3L, "c3", 30);
    assertTableEqualsModel(tables, path);
  }

  @Test
  void replaceAllRemovesEveryFileAndWritesTheRows() {
    String path = silver("replace");
    SilverMerge merge = new SilverMerge(tables);
    merge.merge(
        path,
        List.of("id"),
        List.of(upsert(1L, "a", 10), upsert(2L, "b", 10), upsert(3L, "c", 10)),
        APP,
        1,
        Map.of());
    merge.merge(
        path, List.of("id"), List.of(delete(3L, 20), upsert(1L, "a2", 20)), APP, 2, Map.of());
    long v = tables.version(path);
    WaveResult rebuilt =
        merge.replaceAll(
            path,
            List.of("id"),
            List.of(upsert(5L, "e", 50).row(), upsert(2L, "b5", 50).row()).iterator(),
            APP,
            3,
            Map.of("mssql_cdc.silver", "{\"snapshot_lsn\":\"x\"}"));
    assertEquals(committed(v + 1, 2, 0, 2, 2), rebuilt);
    put(5L, "e", 50);
    put(2L, "b5", 50);
    assertTableEqualsModel(tables, path);
    assertEquals(
        Optional.of("{\"snapshot_lsn\":\"x\"}"), tables.domainMetadata(path, "mssql_cdc.silver"));
    // Replayed: nothing.
    assertEquals(
        new WaveResult(CommitResult.Status.ALREADY_COMMITTED, v + 1, 0, 0, 0, 0),
        merge.replaceAll(
            path, List.of("id"), List.of(upsert(9L, "z", 1).row()).iterator(), APP, 3, Map.of()));
    // Waves continue on the rebuilt table.
    merge.merge(
        path, List.of("id"), List.of(upsert(2L, "b6", 60), upsert(6L, "f", 60)), APP, 4, Map.of());
    put(2L, "b6", 60);
    put(6L, "f", 60);
    assertTableEqualsModel(tables, path);
    // An empty rebuild empties the table.
    assertEquals(
        committed(v + 3, 0, 0, 3, 2),
        merge.replaceAll(path, List.of("id"), List.<Row>of().iterator(), APP, 5, Map.of()));
    assertEquals(List.of(), tables.scan(path));
  }

  static final Schema COMPOSITE_BRONZE =
      DeltaColumn.toBeamSchema(
          List.of(
              DeltaColumn.required("_capture_instance", OutputType.STRING, null),
              DeltaColumn.required("_start_lsn", OutputType.STRING, null),
              DeltaColumn.nullable("_seqval", OutputType.STRING, null),
              DeltaColumn.required("_operation", OutputType.INT, null),
              DeltaColumn.nullable("_command_id", OutputType.INT, null),
              DeltaColumn.nullable("_commit_ts", OutputType.TIMESTAMP_NTZ, null),
              DeltaColumn.nullable("region", OutputType.STRING, null),
              DeltaColumn.required("no", OutputType.INT, null),
              DeltaColumn.nullable("amount", OutputType.decimal(10, 2), null),
              DeltaColumn.nullable("_batch_id", OutputType.INT, null),
              DeltaColumn.nullable("_snapshot", OutputType.STRING, null),
              DeltaColumn.nullable("_chunk", OutputType.INT, null)));

  static final Schema COMPOSITE = SilverTable.schema(COMPOSITE_BRONZE);

  static SilverImage image(boolean delete, String region, int no, String amount, long lsn) {
    Row row =
        Row.withSchema(COMPOSITE)
            .addValues(
                region,
                no,
                amount == null ? null : new java.math.BigDecimal(amount),
                lsn(lsn),
                ts(lsn))
            .build();
    return new SilverImage(row, delete);
  }

  private List<List<Object>> compositeRows(String path) {
    return tables.scan(path).stream()
        .map(r -> Arrays.asList(r.get("region"), r.get("no"), r.get("amount"), r.get("_start_lsn")))
        .sorted(BY_TEXT)
        .collect(Collectors.toList());
  }

  private static List<Object> crow(String region, int no, String amount, long lsn) {
    return Arrays.asList(region, no, new java.math.BigDecimal(amount), lsn(lsn));
  }

  @Test
  void compositeKeysWithANullColumnAndKeyMoves() {
    String path = dir.resolve("composite").toString();
    tables.createIfAbsent(path, SilverTable.definition(COMPOSITE));
    SilverMerge merge = new SilverMerge(tables);
    List<String> keys = List.of("region", "no");
    merge.merge(
        path,
        keys,
        List.of(
            image(false, "eu", 1, "1.00", 10),
            image(false, "us", 1, "2.00", 10),
            image(false, null, 1, "3.00", 10),
            image(false, "eu", 2, "4.00", 10)),
        APP,
        1,
        Map.of());
    // (eu, 1) moves to (us, 7): a delete of the old key and an upsert of the new one; the NULL
    // region row is updated; (us, 1) is not (eu, 1).
    WaveResult move =
        merge.merge(
            path,
            keys,
            List.of(
                image(true, "eu", 1, null, 20),
                image(false, "us", 7, "1.50", 20),
                image(false, null, 1, "3.50", 20)),
            APP,
            2,
            Map.of());
    assertEquals(committed(tables.version(path), 1, 1, 1, 1), move);
    assertEquals(
        List.of(
                crow("eu", 2, "4.00", 10),
                crow("us", 1, "2.00", 10),
                crow("us", 7, "1.50", 20),
                crow(null, 1, "3.50", 20))
            .stream()
            .sorted(BY_TEXT)
            .collect(Collectors.toList()),
        compositeRows(path));
    // The same through a fresh engine (index rebuilt by a scan): the moved key comes back.
    SilverMerge fresh = new SilverMerge(DeltaTables.create());
    fresh.merge(
        path,
        keys,
        List.of(image(false, "eu", 1, "9.00", 30), image(true, "us", 7, null, 30)),
        APP,
        3,
        Map.of());
    assertEquals(
        List.of(
                crow("eu", 1, "9.00", 30),
                crow("eu", 2, "4.00", 10),
                crow("us", 1, "2.00", 10),
                crow(null, 1, "3.50", 20))
            .stream()
            .sorted(BY_TEXT)
            .collect(Collectors.toList()),
        compositeRows(path));
  }
}
