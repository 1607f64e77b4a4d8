package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/** {@link DeltaTables#scanAtVersion}: a pinned version, streamed, files skipped by statistics. */
class ScanAtVersionTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();
  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("_start_lsn", OutputType.STRING, null),
          DeltaColumn.nullable("v", OutputType.INT, null));
  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private List<String> read(String path, long version, Predicate filter) throws IOException {
    List<String> rows = new ArrayList<>();
    try (CloseableIterator<Map<String, Object>> it = tables.scanAtVersion(path, version, filter)) {
      it.forEachRemaining(r -> rows.add(r.get("_start_lsn") + "=" + r.get("v")));
    }
    rows.sort(null); // files come in the log's order
    return rows;
  }

  @Test
  void skipsFilesByStatisticsAndReadsThePinnedVersion() throws IOException {
    String path = dir.resolve("t").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    long[] versions = new long[3];
    for (int file = 0; file < 3; file++) {
      List<Row> rows = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        rows.add(Row.withSchema(SCHEMA).addValues("0x0" + file + "" + i, file * 10 + i).build());
      }
      versions[file] = tables.append(path, SCHEMA, rows, null, 0, Map.of()).version();
    }
    Predicate after01 = new Predicate(">", new Column("_start_lsn"), Literal.ofString("0x001"));

    // The first file's maximum is 0x001: skipped; the second file is read whole (0x010 too).
    assertEquals(
        List.of("0x010=10", "0x011=11", "0x020=20", "0x021=21"), read(path, versions[2], after01));
    // Version AS OF the second append: the third file is not there.
    assertEquals(List.of("0x010=10", "0x011=11"), read(path, versions[1], after01));
    assertEquals(6, read(path, versions[2], null).size());
    Predicate after0 = new Predicate(">", new Column("_start_lsn"), Literal.ofString("0x010"));
    // A file is kept whole: its rows are not filtered.
    assertEquals(
        List.of("0x010=10", "0x011=11", "0x020=20", "0x021=21"), read(path, versions[2], after0));
    assertThrows(IllegalStateException.class, () -> tables.scanAtVersion(path, 99, null));
  }

  /** Appends one row in a commit of its own; returns the version. */
  private long appendOne(String path, String lsn, int v) {
    return tables
        .append(
            path,
            SCHEMA,
            List.of(Row.withSchema(SCHEMA).addValues(lsn, v).build()),
            null,
            0,
            Map.of())
        .version();
  }

  @Test
  void theVersionJustCommittedIsScannedWithoutReadingTheLog() throws IOException {
    String path = dir.resolve("kept").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    long first = appendOne(path, "0x01", 1);
    long second = appendOne(path, "0x02", 2);
    long before = tables.kernelSnapshotReads();

    assertEquals(List.of("0x01=1", "0x02=2"), read(path, second, null));
    assertEquals(0, tables.kernelSnapshotReads() - before, "the kept post-commit snapshot");
    assertEquals(List.of("0x01=1"), read(path, first, null));
    assertEquals(1, tables.kernelSnapshotReads() - before, "an older version is read");
    appendOne(path, "0x03", 3);
    long afterThird = tables.kernelSnapshotReads();
    assertEquals(List.of("0x01=1", "0x02=2"), read(path, second, null));
    assertEquals(1, tables.kernelSnapshotReads() - afterThird, "no longer the kept one");
  }
}
