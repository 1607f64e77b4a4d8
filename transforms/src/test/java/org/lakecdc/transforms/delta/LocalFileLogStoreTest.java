package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

class LocalFileLogStoreTest {
  @TempDir Path dir;

  private final LocalFileLogStore store = new LocalFileLogStore(new Configuration(false));

  private org.apache.hadoop.fs.Path hadoopPath(Path file) {
    return new org.apache.hadoop.fs.Path(file.toUri());
  }

  private List<String> entries(Path directory) throws Exception {
    try (Stream<Path> files = Files.list(directory)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aNewFileHoldsEachActionOnItsOwnLineAndNoTemporaryFileStays() throws Exception {
    Path log = Files.createDirectory(dir.resolve("_delta_log"));
    Path file = log.resolve("00000000000000000000.json");

    store.write(hadoopPath(file), List.of("{\"a\":1}", "{\"b\":2}").iterator(), false, null);

    assertEquals("{\"a\":1}\n{\"b\":2}\n", Files.readString(file, StandardCharsets.UTF_8));
    assertEquals(List.of("00000000000000000000.json"), entries(log));
    // Kernel's own direct writes (checkpoint Parquet files) are visible partly: it must rename.
    assertTrue(store.isPartialWriteVisible(hadoopPath(file), null));
  }

  @Test
  void aTakenVersionIsRefusedWithFileAlreadyExistsAndKeepsItsContent() throws Exception {
    Path log = Files.createDirectory(dir.resolve("_delta_log"));
    Path file = log.resolve("00000000000000000003.json");
    store.write(hadoopPath(file), List.of("first").iterator(), false, null);

    FileAlreadyExistsException e =
        assertThrows(
            FileAlreadyExistsException.class,
            () -> store.write(hadoopPath(file), List.of("second").iterator(), false, null));

    assertEquals(file.toString(), e.getFile());
    assertEquals("first\n", Files.readString(file));
    assertEquals(List.of("00000000000000000003.json"), entries(log));
  }

  @Test
  void ofWritersRacingForOneVersionExactlyOneWins() throws Exception {
    Path log = Files.createDirectory(dir.resolve("_delta_log"));
    Path file = log.resolve("00000000000000000007.json");
    int writers = 8;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < writers; i++) {
        String line = "writer " + i;
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  try {
                    store.write(hadoopPath(file), List.of(line).iterator(), false, null);
                    return true;
                  } catch (FileAlreadyExistsException e) {
                    return false;
                  }
                }));
      }
      start.countDown();
      int won = 0;
      String winner = null;
      for (int i = 0; i < writers; i++) {
        if (results.get(i).get()) {
          won++;
          winner = "writer " + i + "\n";
        }
      }
      assertEquals(1, won);
      assertEquals(winner, Files.readString(file));
      assertEquals(List.of("00000000000000000007.json"), entries(log));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anOverwriteReplacesTheFileAndDropsHadoopsStaleChecksumSidecar() throws Exception {
    Path log = Files.createDirectory(dir.resolve("_delta_log"));
    Path file = log.resolve("_last_checkpoint");
    Files.writeString(file, "{\"version\":10}\n");
    Files.write(log.resolve("._last_checkpoint.crc"), new byte[] {1, 2, 3});

    store.write(hadoopPath(file), List.of("{\"version\":20}").iterator(), true, null);

    assertEquals("{\"version\":20}\n", Files.readString(file));
    assertEquals(List.of("_last_checkpoint"), entries(log));
  }

  @Test
  void deltaTablesWriteLocalTablesThroughItUnlessAnotherLogStoreIsConfigured() throws Exception {
    List<DeltaColumn> columns = List.of(DeltaColumn.required("id", OutputType.BIGINT, "Id"));
    Schema schema = DeltaColumn.toBeamSchema(columns);
    Row row = Row.withSchema(schema).addValue(1L).build();

    DeltaTables tables = DeltaTables.create(Map.of());
    String ours = dir.resolve("ours").toString();
    tables.createIfAbsent(ours, TableDefinition.of(TableKind.BRONZE, columns));
    tables.append(ours, schema, List.of(row), "app", 1, Map.of());
    Path oursLog = dir.resolve("ours/_delta_log");
    // No Hadoop checksum sidecar (".<name>.crc") beside the commits: they were not written through
    // Hadoop's file system.
    assertTrue(
        entries(oursLog).stream().noneMatch(n -> n.startsWith(".")), entries(oursLog).toString());
    assertTrue(entries(oursLog).contains("00000000000000000000.json"), entries(oursLog).toString());
    assertEquals(List.of(Map.of("id", 1L)), tables.scan(ours));

    DeltaTables hdfsStore =
        DeltaTables.create(Map.of(LocalFileLogStore.CONF_KEY, "io.delta.storage.HDFSLogStore"));
    String theirs = dir.resolve("theirs").toString();
    hdfsStore.createIfAbsent(theirs, TableDefinition.of(TableKind.BRONZE, columns));
    assertTrue(
        entries(dir.resolve("theirs/_delta_log")).contains(".00000000000000000000.json.crc"),
        "Delta's HDFSLogStore, configured by the user, writes through Hadoop (with its sidecar)");
  }

  @Test
  void writersAndReadersOfOneTableNeverMeetAHalfWrittenCheckpoint() throws Exception {
    // Two committers appending to one shared table (as every table's committer appends to the
    // facts table) while a third reads it: Kernel writes a checkpoint every 10 versions, and a
    // reader must never open one before it is whole.
    List<DeltaColumn> columns =
        List.of(
            DeltaColumn.required("id", OutputType.BIGINT, "Id"),
            DeltaColumn.nullable("note", OutputType.STRING, "Text, so checkpoints hold strings"));
    Schema schema = DeltaColumn.toBeamSchema(columns);
    String path = dir.resolve("shared").toString();
    DeltaTables.create(Map.of()).createIfAbsent(path, TableDefinition.of(TableKind.FACTS, columns));
    int perWriter = 40;
    ExecutorService pool = Executors.newFixedThreadPool(3);
    CountDownLatch start = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean writing =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        int writer = w;
        writers.add(
            pool.submit(
                () -> {
                  DeltaTables tables = DeltaTables.create(Map.of());
                  start.await();
                  for (int i = 0; i < perWriter; i++) {
                    Row row =
                        Row.withSchema(schema)
                            .addValues((long) writer * 1000 + i, "{\"type\":\"note " + i + "\"}")
                            .build();
                    tables.append(path, schema, List.of(row), "writer" + writer, i + 1, Map.of());
                  }
                  return null;
                }));
      }
      Future<Integer> reader =
          pool.submit(
              () -> {
                start.await();
                int reads = 0;
                while (writing.get()) {
                  DeltaTables.create(Map.of()).version(path);
                  reads++;
                }
                return reads;
              });
      start.countDown();
      for (Future<?> w : writers) {
        w.get();
      }
      writing.set(false);
      assertTrue(reader.get() > 0);
    } finally {
      pool.shutdownNow();
    }
    assertEquals(2 * perWriter, DeltaTables.create(Map.of()).scan(path).size());
  }
}
