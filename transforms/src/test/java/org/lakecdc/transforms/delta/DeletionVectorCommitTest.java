package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.silver.DeletionVectors;

/**
 * {@link TableDeletionVectors#scanLiveRows}, {@link TableDeletionVectors#readLiveRowsAt}, {@link
 * TableDeletionVectors#deletedRowPositions} and {@link TableDeletionVectors#commitDeletionVectors}:
 * positions, vectors read back, and Kernel's conflict check with {@code withMaxRetries(0)}.
 */
class DeletionVectorCommitTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, null),
          DeltaColumn.nullable("name", OutputType.STRING, null));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private String table() {
    String path = dir.resolve("t").toString();
    tables.createIfAbsent(
        path,
        new TableDefinition(
            TableKind.SILVER, COLUMNS, "test", Map.of("delta.enableDeletionVectors", "true")));
    List<Row> rows = new java.util.ArrayList<>();
    for (long id = 0; id < 6; id++) {
      rows.add(Row.withSchema(SCHEMA).addValues(id, "n" + id).build());
    }
    tables.append(path, SCHEMA, rows, null, 0, Map.of());
    return path;
  }

  private List<String> live(String path, long version) {
    List<String> out = new java.util.ArrayList<>();
    tables
        .deletionVectors()
        .scanLiveRows(
            path,
            version,
            List.of("NAME", "id"),
            (file, position, values) -> out.add(position + ":" + values[0] + ":" + values[1]));
    return out;
  }

  private DeletionVectorUpdate update(String file, long[] positions, byte[][] holder) {
    DeletionVectors.VectorFile vf =
        DeletionVectors.file(List.of(DeletionVectors.serialize(positions)));
    holder[0] = vf.bytes();
    return new DeletionVectorUpdate(
        file,
        vf.placements().get(0).offset(),
        vf.placements().get(0).sizeInBytes(),
        positions.length);
  }

  @Test
  void vectorsCommittedAreAppliedByScansAndReadBack() {
    String path = table();
    long v = tables.version(path);
    assertEquals(
        List.of("0:n0:0", "1:n1:1", "2:n2:2", "3:n3:3", "4:n4:4", "5:n5:5"), live(path, v));
    String file = tables.deletionVectors().dataFileRows(path, v).get(0).file();
    assertEquals(6, tables.deletionVectors().dataFileRows(path, v).get(0).numRecords());
    byte[][] bytes = new byte[1][];
    DeletionVectorUpdate first = update(file, new long[] {1, 4}, bytes);
    CommitResult result =
        tables
            .deletionVectors()
            .commitDeletionVectors(
                path, v, bytes[0], List.of(first), List.of(), "app", 1, Map.of("d", "x"));
    assertEquals(new CommitResult(CommitResult.Status.COMMITTED, v + 1, 0, 1), result);
    assertEquals(List.of("0:n0:0", "2:n2:2", "3:n3:3", "5:n5:5"), live(path, v + 1));
    assertEquals(
        List.of(0L, 2L, 3L, 5L),
        tables.scan(path).stream()
            .map(r -> (Long) r.get("id"))
            .sorted()
            .collect(Collectors.toList()));
    assertEquals(
        "[1, 4]",
        java.util.Arrays.toString(
            tables.deletionVectors().deletedRowPositions(path, v + 1, List.of(file)).get(file)));
    assertEquals(2, tables.deletionVectors().dataFileRows(path, v + 1).get(0).deletedRows());
    // The old version still reads all rows (time travel).
    assertEquals(6, live(path, v).size());
    // A replay of the transaction writes nothing.
    assertEquals(
        new CommitResult(CommitResult.Status.ALREADY_COMMITTED, v + 1, 0, 0),
        tables
            .deletionVectors()
            .commitDeletionVectors(
                path, v, bytes[0], List.of(first), List.of(), "app", 1, Map.of()));
  }

  @Test
  void aConcurrentCommitAfterTheTransactionWasBuiltMakesItFail() {
    String path = table();
    long v = tables.version(path);
    String file = tables.deletionVectors().dataFileRows(path, v).get(0).file();
    byte[][] bytes = new byte[1][];
    DeletionVectorUpdate update = update(file, new long[] {0}, bytes);
    DeltaTables other = DeltaTables.create();
    DeltaConflictException e =
        assertThrows(
            DeltaConflictException.class,
            () ->
                tables
                    .deletionVectors()
                    .commitDeletionVectors(
                        path,
                        v,
                        bytes[0],
                        List.of(update),
                        List.of(),
                        "app",
                        1,
                        Map.of(),
                        () ->
                            other.append(
                                path,
                                SCHEMA,
                                List.of(Row.withSchema(SCHEMA).addValues(9L, "x").build()),
                                null,
                                0,
                                Map.of())));
    assertEquals(
        "Delta table "
            + path
            + ": the merge read version "
            + v
            + " but another commit landed first; re-read the table and merge again",
        e.getMessage());
    assertEquals(7, tables.scan(path).size());
    assertEquals(OptionalLong.empty(), tables.latestTransactionVersion(path, "app"));
    // A stale read version is refused before anything is written.
    assertThrows(
        DeltaConflictException.class,
        () ->
            tables
                .deletionVectors()
                .commitDeletionVectors(
                    path, v, bytes[0], List.of(update), List.of(), "app", 1, Map.of()));
  }

  @Test
  void anUpdateOfAFileNotInTheVersionIsRefused() {
    String path = table();
    long v = tables.version(path);
    byte[][] bytes = new byte[1][];
    DeletionVectorUpdate update = update("nope.parquet", new long[] {0}, bytes);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                tables
                    .deletionVectors()
                    .commitDeletionVectors(
                        path, v, bytes[0], List.of(update), List.of(), null, 0, Map.of()));
    assertEquals(
        "Delta table " + path + " has no data file [nope.parquet] at version " + v, e.getMessage());
    assertEquals(v, tables.version(path));
  }

  @Test
  void readingRowsAtPositionsVisitsOnlyTheWantedOnesTheVectorsLeave() {
    String path = table();
    long v = tables.version(path);
    String file = tables.deletionVectors().dataFileRows(path, v).get(0).file();
    byte[][] bytes = new byte[1][];
    DeletionVectorUpdate deleted = update(file, new long[] {1, 4}, bytes);
    // Rows 1 and 4 deleted at v + 1: a wanted position the vector deletes is not visited.
    tables
        .deletionVectors()
        .commitDeletionVectors(path, v, bytes[0], List.of(deleted), List.of(), null, 0, Map.of());
    List<String> out = new java.util.ArrayList<>();
    long visited =
        tables
            .deletionVectors()
            .readLiveRowsAt(
                path,
                v + 1,
                List.of("name", "ID"),
                Map.of(file, new long[] {0, 1, 3, 5}),
                (f, position, values) -> out.add(position + ":" + values[0] + ":" + values[1]));
    assertEquals(List.of("0:n0:0", "3:n3:3", "5:n5:5"), out);
    assertEquals(3, visited);
    out.clear();
    tables
        .deletionVectors()
        .readLiveRowsAt(
            path,
            v,
            List.of("name"),
            Map.of(file, new long[] {1, 4}),
            (f, position, values) -> out.add(position + ":" + values[0]));
    assertEquals(List.of("1:n1", "4:n4"), out);
  }
}
