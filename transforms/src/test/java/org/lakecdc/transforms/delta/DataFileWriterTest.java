package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Data files are written in bounded memory: {@link DeltaTables#writeDataFiles} pulls its rows as it
 * writes the files, and {@link DataFileWriter} takes rows pushed one at a time; both roll files at
 * Kernel's target size.
 */
class DataFileWriterTest {
  @TempDir Path dir;

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final List<DeltaColumn> ORDERS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, null),
          DeltaColumn.nullable("customer", OutputType.STRING, null),
          DeltaColumn.nullable("amount", OutputType.decimal(18, 2), null));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(ORDERS);

  /** A target this small closes a file every few hundred rows of {@link #order}. */
  private static final Map<String, String> SMALL_FILES =
      Map.of(ParquetDataFiles.TARGET_FILE_SIZE_CONF, "8192");

  private static Row order(long id) {
    return Row.withSchema(SCHEMA)
        .addValues(id, "customer-" + id, BigDecimal.valueOf(id, 2))
        .build();
  }

  private String table(DeltaTables tables) {
    String path = dir.resolve("orders").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, ORDERS));
    return path;
  }

  /** The Parquet data files in the table directory (closed or still being written). */
  private static long dataFiles(String path) {
    try (Stream<Path> files = Files.list(Path.of(path))) {
      return files.filter(f -> f.getFileName().toString().endsWith(".parquet")).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Rows 0..n-1, counting pulls; at the first row of each batch, notes the data files on disk. */
  private static final class CountingRows implements Iterator<Row> {
    private final long n;
    private final String path;
    private final List<Long> filesAtBatchStart = new ArrayList<>();
    private long pulled;

    CountingRows(long n, String path) {
      this.n = n;
      this.path = path;
    }

    @Override
    public boolean hasNext() {
      return pulled < n;
    }

    @Override
    public Row next() {
      if (pulled >= n) {
        throw new NoSuchElementException();
      }
      if (pulled % RowBatches.BATCH_ROWS == 0) {
        filesAtBatchStart.add(dataFiles(path));
      }
      return order(pulled++);
    }
  }

  /**
   * The files hold consecutive ids in write order: file k holds exactly the {@code rowCount} ids
   * after those of the files before it (its statistics' min and max, with unique ids).
   */
  private static void assertConsecutive(List<DataFileAction> files, long n) throws IOException {
    long next = 0;
    for (DataFileAction file : files) {
      JsonNode stats =
          JSON.readTree(JSON.readTree(file.actionJson()).get("add").get("stats").asText());
      assertTrue(file.rowCount() > 0, "no empty file");
      assertEquals(file.rowCount(), stats.get("numRecords").asLong());
      assertEquals(next, stats.get("minValues").get("id").asLong(), "first id of " + file.path());
      assertEquals(
          next + file.rowCount() - 1,
          stats.get("maxValues").get("id").asLong(),
          "last id of " + file.path());
      next += file.rowCount();
    }
    assertEquals(n, next, "every row in one file");
  }

  /**
   * The memory proof: 3 batches and a bit. Rows are pulled one batch (4096 rows) at a time, and
   * each batch is in files before the next is pulled: when the first row of batch 2 is pulled,
   * files of batch 1 are already on disk (at least one closed, as only one is ever open), and each
   * later batch starts with more files than the one before. An implementation that collected the
   * rows first would see no file at any pull.
   */
  @Test
  void writeDataFilesPullsItsRowsAsItWritesTheFiles() throws IOException {
    DeltaTables tables = DeltaTables.create(SMALL_FILES);
    String path = table(tables);
    long n = 3L * RowBatches.BATCH_ROWS + 100;
    CountingRows rows = new CountingRows(n, path);

    List<DataFileAction> files = tables.writeDataFiles(path, SCHEMA, () -> rows);

    assertEquals(n, rows.pulled);
    List<Long> seen = rows.filesAtBatchStart;
    assertEquals(4, seen.size());
    assertEquals(0L, seen.get(0), "no file before the first row");
    assertTrue(seen.get(1) >= 2, "batch 1 written before batch 2 is pulled: " + seen);
    assertTrue(seen.get(2) > seen.get(1) && seen.get(3) > seen.get(2), "files per batch: " + seen);
    assertTrue(files.size() >= seen.get(3), "files only added: " + files.size());
    assertEquals(files.size(), dataFiles(path));
    assertConsecutive(files, n);

    tables.commit(path, files, "w", 1, Map.of());
    assertEquals(
        LongStream.range(0, n).boxed().toList(),
        tables.scan(path).stream().map(r -> (Long) r.get("id")).sorted().toList());
  }

  /** Rows pushed one at a time give the same files, rolled at the target size. */
  @Test
  void rowsPushedOneAtATimeAreWrittenInFilesRolledAtTheTargetSize() throws IOException {
    DeltaTables tables = DeltaTables.create(SMALL_FILES);
    String path = table(tables);
    long n = RowBatches.BATCH_ROWS + 10;
    List<DataFileAction> files;
    try (DataFileWriter writer = tables.openDataFileWriter(path, SCHEMA)) {
      assertEquals(0, dataFiles(path), "no file before a row");
      for (long id = 0; id < n; id++) {
        writer.write(order(id));
      }
      assertTrue(dataFiles(path) >= 2, "the first batch is in files before finish");
      assertEquals(n, writer.rowCount());
      files = writer.finish();
      assertSame(files, writer.finish(), "finish is idempotent");
      assertThrows(IllegalStateException.class, () -> writer.write(order(n)));
    }
    assertTrue(files.size() >= 2, "several files: " + files.size());
    assertConsecutive(files, n);

    tables.commit(path, files, "w", 1, Map.of());
    assertEquals(n, tables.scan(path).size());
  }

  /** A writer closed before finish gives nothing to commit and refuses more rows. */
  @Test
  void aWriterClosedBeforeFinishIsAbandoned() {
    DeltaTables tables = DeltaTables.create();
    String path = table(tables);
    DataFileWriter writer = tables.openDataFileWriter(path, SCHEMA);
    writer.write(order(1));
    writer.close();

    assertThrows(IllegalStateException.class, writer::finish);
    assertThrows(IllegalStateException.class, () -> writer.write(order(2)));
    assertFalse(tables.hasDataFiles(path));
  }

  /** No row, no file. */
  @Test
  void aWriterWithoutRowsWritesNoFile() {
    DeltaTables tables = DeltaTables.create();
    String path = table(tables);
    try (DataFileWriter writer = tables.openDataFileWriter(path, SCHEMA)) {
      assertEquals(List.of(), writer.finish());
    }
    assertEquals(0, dataFiles(path));
  }

  /**
   * A writer after a commit that only added files writes as the one before it; a writer after a
   * column was added writes the table's new columns (its files' statistics cover the new column),
   * though the rows' schema is the same: its plan follows the table's metadata.
   */
  @Test
  void aWriterAfterAColumnWasAddedWritesTheNewColumns() throws IOException {
    DeltaTables tables = DeltaTables.create();
    String path = table(tables);
    List<String> stats = new ArrayList<>();
    for (long batch = 1; batch <= 3; batch++) {
      if (batch == 3) {
        tables.addColumns(path, List.of(DeltaColumn.nullable("note", OutputType.STRING, null)));
      }
      List<DataFileAction> files;
      try (DataFileWriter writer = tables.openDataFileWriter(path, SCHEMA)) {
        writer.write(order(batch));
        files = writer.finish();
      }
      tables.commit(path, files, "w", batch, Map.of());
      JsonNode add = JSON.readTree(files.get(0).actionJson()).get("add");
      stats.add(JSON.readTree(add.get("stats").asText()).get("nullCount").toString());
    }
    assertEquals(
        List.of(
            "{\"id\":0,\"customer\":0,\"amount\":0}",
            "{\"id\":0,\"customer\":0,\"amount\":0}",
            "{\"id\":0,\"customer\":0,\"amount\":0,\"note\":1}"),
        stats);
    assertEquals(3, tables.scan(path).size());
  }

  /** The coder of file descriptions round-trips every field, a row count of -1 included. */
  @Test
  void fileDescriptionsRoundTripThroughTheirCoder() throws Exception {
    DataFileAction action =
        new DataFileAction(
            "file:/data/bronze/0a1b-000.parquet", 1_234_567L, -1L, "{\"add\":{\"path\":\"x\"}}");
    byte[] bytes = CoderUtils.encodeToByteArray(DataFileActionCoder.of(), action);
    assertEquals(action, CoderUtils.decodeFromByteArray(DataFileActionCoder.of(), bytes));
    assertEquals(
        List.of(action, action),
        CoderUtils.decodeFromByteArray(
            ListCoder.of(DataFileActionCoder.of()),
            CoderUtils.encodeToByteArray(
                ListCoder.of(DataFileActionCoder.of()), List.of(action, action))));
    DataFileActionCoder.of().verifyDeterministic();
  }
}
