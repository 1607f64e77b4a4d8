package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.locals3.LocalS3Server;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * {@link TableMarkers}: marker files in a hidden folder of a table, on a local table and on an
 * {@code s3a://} table through the local S3 server, seen by a second {@link DeltaTables} (another
 * worker's) and left alone by the table's reads and {@code VACUUM}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TableMarkersTest {
  @TempDir static Path dir;
  private static LocalS3Server server;

  @BeforeAll
  static void startServer() throws Exception {
    server = LocalS3Server.start(dir.resolve("s3"));
    server.createBucket("markers");
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  /** Puts, lists, reads and deletes markers of a facts table at {@code path}. */
  private static void markersOf(Map<String, String> conf, String path) throws IOException {
    DeltaTables writer = DeltaTables.create(conf);
    DeltaTables other = DeltaTables.create(conf);
    writer.createIfAbsent(
        path, TableDefinition.of(TableKind.FACTS, FactsTable.definition().columns()));
    writer.append(
        path,
        FactsTable.SCHEMA,
        List.of(FactsTable.row().set(FactsTable.APP_ID, "a").set(FactsTable.ROWS, 1L).build()),
        "a",
        0,
        Map.of());
    TableMarkers run = writer.markers(path, "_marks/0x01/run-1");
    assertEquals(Set.of(), other.markers(path, "_marks/0x01/run-1").names(), "no folder yet");

    run.put("3", "chunk 2 was handed over");
    run.put("4", "first");
    run.put("4", "second");

    TableMarkers seen = other.markers(path, "_marks/0x01/run-1");
    assertEquals(Set.of("3", "4"), seen.names());
    assertEquals(Optional.of("chunk 2 was handed over"), seen.read("3"));
    assertEquals(Optional.of("second"), seen.read("4"));
    assertEquals(Optional.empty(), seen.read("5"));
    assertEquals(Set.of(), other.markers(path, "_marks/0x01").names(), "subfolders are no markers");
    assertEquals(1, other.scan(path).size(), "the table's rows are the log's only");
    assertEquals(0, writer.vacuum(path, Instant.now().plusSeconds(3600), false).files().size());
    assertEquals(Set.of("3", "4"), seen.names(), "VACUUM leaves a hidden folder alone");

    other.markers(path, "_marks").deleteAll();

    assertEquals(Set.of(), run.names());
    other.markers(path, "_marks").deleteAll();
    assertEquals(1, writer.scan(path).size());
  }

  @Test
  void markersOfALocalTableAreSharedListedReadAndDeleted() throws IOException {
    markersOf(Map.of(), dir.resolve("local").toString());
  }

  @Test
  void markersOfAnS3TableAreSharedListedReadAndDeleted() throws IOException {
    markersOf(server.hadoopConf(), "s3a://markers/tables/facts");
  }

  @Test
  void aFolderDeltaWouldReadOrANameWithASlashIsRefused() {
    DeltaTables tables = DeltaTables.create();
    String table = dir.resolve("refused").toString();
    assertEquals(
        "A marker folder must be hidden from Delta (start with _ or .), not 'marks'",
        assertThrows(IllegalArgumentException.class, () -> tables.markers(table, "marks"))
            .getMessage());
    TableMarkers markers = tables.markers(table, "_marks");
    assertEquals(
        "A marker name must be a plain file name (no /, not starting with .), not 'a/b'",
        assertThrows(IllegalArgumentException.class, () -> markers.put("a/b", "x")).getMessage());
  }
}
