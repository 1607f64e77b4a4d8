package org.lakecdc.transforms.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DeltaTables;

/** The bronze snapshot sink writes a range's rows as it pulls them, stamped with S. */
class SnapshotFileSinkTest {
  @TempDir Path dir;

  private static final Schema CHANGE =
      Schema.builder().addInt32Field("order_id").addNullableStringField("status").build();
  private static final String S = "0x0000002A000001000071";
  private static final AtomicLong LISTENED = new AtomicLong();

  private static long dataFiles(String path) {
    try (Stream<Path> files = Files.list(Path.of(path))) {
      return files.filter(f -> f.getFileName().toString().endsWith(".parquet")).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Change rows 0..n-1; notes the data files on disk when row 4096 is pulled. */
  private static final class Rows implements Iterator<Row> {
    private final int n;
    private final String path;
    private int pulled;
    private long filesAtSecondBatch = -1;

    Rows(int n, String path) {
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
      if (pulled == 4096) {
        filesAtSecondBatch = dataFiles(path);
      }
      return Row.withSchema(CHANGE).addValues(pulled++, "new").build();
    }
  }

  @Test
  void aRangeIsWrittenAsItIsReadIntoRolledFilesStampedWithS() throws Exception {
    DeltaTables tables = DeltaTables.create();
    String bronze = dir.resolve("bronze").toString();
    tables.createIfAbsent(bronze, BronzeTable.definition(CHANGE));
    SnapshotFileSink sink =
        new SnapshotFileSink(
            bronze,
            S,
            Map.of("delta.kernel.default.parquet.writer.targetMaxFileSize", "8192"),
            LISTENED::incrementAndGet);
    int n = 2 * 4096 + 5;
    Rows rows = new Rows(n, bronze);
    long before = LISTENED.get();

    sink.setup();
    SnapshotFiles written = sink.write(7, rows);
    SnapshotFiles empty = sink.write(8, new ArrayList<Row>().iterator());
    sink.teardown();

    assertEquals(n, rows.pulled);
    assertTrue(rows.filesAtSecondBatch >= 2, "the first batch is in files before the second");
    assertEquals(n, written.rows());
    assertEquals(n, LISTENED.get() - before, "the listener hears every row once");
    assertEquals((long) n, written.files().stream().mapToLong(f -> f.rowCount()).sum());
    assertTrue(written.files().size() > 2, "files rolled: " + written.files().size());
    assertSame(SnapshotFiles.NONE, empty);
    assertEquals(
        written,
        CoderUtils.decodeFromByteArray(
            sink.resultCoder(), CoderUtils.encodeToByteArray(sink.resultCoder(), written)));

    assertEquals(0, tables.scan(bronze).size(), "nothing is committed by the sink");
    tables.commit(bronze, written.files(), null, 0, Map.of());
    List<Map<String, Object>> committed = tables.scan(bronze);
    assertEquals(
        IntStream.range(0, n).boxed().toList(),
        committed.stream().map(r -> (Integer) r.get("order_id")).sorted().toList());
    for (Map<String, Object> row : committed) {
      assertEquals(S, row.get("_snapshot"));
      assertNull(row.get("_batch_id"));
      assertNull(row.get("_chunk"));
    }
  }
}
