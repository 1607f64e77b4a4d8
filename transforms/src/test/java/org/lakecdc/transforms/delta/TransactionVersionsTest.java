package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * The transaction identifiers of many app ids read in one pass over the log ({@link
 * KernelInternals#latestTransactionVersions}), as a committer round's facts commit checks its
 * members: the same answers as Kernel's lookup of each app id alone.
 */
class TransactionVersionsTest {
  private static final List<DeltaColumn> COLUMNS =
      List.of(DeltaColumn.required("id", OutputType.BIGINT, "Id"));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  @TempDir Path dir;

  @Test
  void theLatestVersionOfEveryAppIdFromTheCommitsAndTheCheckpointInOnePass() {
    DeltaTables tables = DeltaTables.create();
    String path = dir.resolve("t").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    // Versions 2..12: app "old" 1..3 (before the checkpoint at 10), "a" 5 and 6, "b" 1, "c" 1..6.
    String[] apps = {"old", "old", "old", "a", "c", "c", "c", "c", "a", "c", "b"};
    long[] versions = {1, 2, 3, 5, 1, 2, 3, 4, 6, 5, 1};
    for (int i = 0; i < apps.length; i++) {
      Row row = Row.withSchema(SCHEMA).addValues((long) i).build();
      tables.append(path, SCHEMA, List.of(row), apps[i], versions[i], Map.of());
    }
    tables.append(
        path, SCHEMA, List.of(Row.withSchema(SCHEMA).addValues(99L).build()), "c", 6, Map.of());
    assertEquals(13, tables.version(path));
    assertTrue(Files.exists(dir.resolve("t/_delta_log/00000000000000000010.checkpoint.parquet")));

    Engine engine = DefaultEngine.create(new Configuration());
    Snapshot snapshot = Table.forPath(engine, path).getLatestSnapshot(engine);
    Map<String, Long> found =
        KernelInternals.latestTransactionVersions(
            engine, snapshot, Set.of("old", "a", "b", "c", "never"));
    assertEquals(Map.of("old", 3L, "a", 6L, "b", 1L, "c", 6L), found);
    // What Kernel answers for each app id alone.
    Map<String, Long> alone = new HashMap<>();
    for (String appId : List.of("old", "a", "b", "c", "never")) {
      snapshot.getLatestTransactionVersion(engine, appId).ifPresent(v -> alone.put(appId, v));
    }
    assertEquals(alone, found);
    assertEquals(Map.of(), KernelInternals.latestTransactionVersions(engine, snapshot, Set.of()));
  }
}
