package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * A chunked snapshot's chunk commit (its own transaction id {@code <appId>#snap.<S>} and domain
 * {@code mssql_cdc.snapshot_chunk}, as {@code WriteChunksToDelta} commits it) and the stream's
 * batch commit (transaction id {@code <appId>}, domains {@code mssql_cdc.position} and {@code
 * mssql_cdc.batch}) land on the same bronze table at the same time: whichever loses the race is
 * rebased on the winner, neither fails nor is skipped.
 */
class ChunkAndBatchCommitsTest {
  @TempDir Path dir;

  private static final Lsn S = Lsn.parse("0x00000020000000100001");
  private static final List<DeltaColumn> COLUMNS =
      List.of(DeltaColumn.nullable("id", OutputType.BIGINT, null));
  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private final DeltaTables tables = DeltaTables.create();

  private String bronze() {
    String path = dir.resolve("bronze").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    return path;
  }

  private List<DataFileAction> files(String path, long id) {
    return tables.writeDataFiles(
        path, SCHEMA, List.of(Row.withSchema(SCHEMA).addValue(id).build()));
  }

  private CommitResult chunk(DeltaTables on, String path, int chunk, Runnable before) {
    return on.commits()
        .commit(
            path,
            files(path, 100 + chunk),
            ChunkedSnapshotFacts.bronzeAppId("app", S),
            chunk,
            Map.of(ChunkedSnapshotFacts.BRONZE_DOMAIN, "{\"chunk\":" + chunk + "}"),
            before);
  }

  private CommitResult batch(DeltaTables on, String path, long batch, Runnable before) {
    return on.commits()
        .commit(
            path,
            files(path, batch),
            "app",
            batch,
            Map.of(
                StreamPosition.BRONZE_DOMAIN,
                "{\"batch\":" + batch + "}",
                "mssql_cdc.batch",
                "{\"batch_id\":" + batch + "}"),
            before);
  }

  private List<Long> ids(String path) {
    return tables.scan(path).stream().map(r -> (Long) r.get("id")).sorted().toList();
  }

  @Test
  void aBatchCommitThatLosesToAChunkCommitIsRebasedAndCommits() {
    String path = bronze();
    DeltaTables other = DeltaTables.create();
    AtomicReference<CommitResult> chunk = new AtomicReference<>();

    CommitResult batch = batch(tables, path, 1, () -> chunk.set(chunk(other, path, 0, () -> {})));

    assertEquals(CommitResult.Status.COMMITTED, chunk.get().status());
    assertEquals(CommitResult.Status.COMMITTED, batch.status());
    assertEquals(chunk.get().version() + 1, batch.version());
    assertEquals(List.of(1L, 100L), ids(path));
    assertEquals(OptionalLong.of(1), tables.latestTransactionVersion(path, "app"));
    assertEquals(
        OptionalLong.of(0),
        tables.latestTransactionVersion(path, ChunkedSnapshotFacts.bronzeAppId("app", S)));
    assertEquals(
        "{\"chunk\":0}",
        tables.domainMetadata(path, ChunkedSnapshotFacts.BRONZE_DOMAIN).orElseThrow());
    assertEquals(
        "{\"batch\":1}", tables.domainMetadata(path, StreamPosition.BRONZE_DOMAIN).orElseThrow());
  }

  @Test
  void aChunkCommitThatLosesToABatchCommitIsRebasedAndCommits() {
    String path = bronze();
    DeltaTables other = DeltaTables.create();
    AtomicReference<CommitResult> batch = new AtomicReference<>();

    CommitResult chunk = chunk(tables, path, 0, () -> batch.set(batch(other, path, 1, () -> {})));
    CommitResult next = chunk(tables, path, 1, () -> batch.set(batch(other, path, 2, () -> {})));

    assertEquals(CommitResult.Status.COMMITTED, chunk.status());
    assertEquals(CommitResult.Status.COMMITTED, next.status());
    assertEquals(CommitResult.Status.COMMITTED, batch.get().status());
    assertEquals(List.of(1L, 2L, 100L, 101L), ids(path));
    assertEquals(OptionalLong.of(2), tables.latestTransactionVersion(path, "app"));
    assertEquals(
        OptionalLong.of(1),
        tables.latestTransactionVersion(path, ChunkedSnapshotFacts.bronzeAppId("app", S)));
    assertEquals(
        "{\"chunk\":1}",
        tables.domainMetadata(path, ChunkedSnapshotFacts.BRONZE_DOMAIN).orElseThrow());
    assertEquals(
        "{\"batch\":2}", tables.domainMetadata(path, StreamPosition.BRONZE_DOMAIN).orElseThrow());
  }
}
