package org.lakecdc.transforms.delta;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.kernel.Operation;
import io.delta.kernel.Table;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.KernelException;
import io.delta.kernel.utils.CloseableIterable;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

class DeltaTablesTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private static final List<DeltaColumn> ORDERS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, "Order id"),
          DeltaColumn.nullable("customer", OutputType.STRING, "Customer name"),
          DeltaColumn.nullable("amount", OutputType.decimal(18, 2), null));

  private static final Schema ORDERS_SCHEMA = DeltaColumn.toBeamSchema(ORDERS);

  private String path(String name) {
    return dir.resolve(name).toString();
  }

  private static Row order(long id, String customer, String amount) {
    return Row.withSchema(ORDERS_SCHEMA)
        .addValues(id, customer, amount == null ? null : new BigDecimal(amount))
        .build();
  }

  private String ordersTable(String name) {
    String path = path(name);
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, ORDERS));
    return path;
  }

  private List<Long> ids(String path) {
    return tables.scan(path).stream()
        .map(r -> (Long) r.get("id"))
        .sorted()
        .collect(Collectors.toList());
  }

  /** A table created with Kernel alone, without the mssql_cdc properties or a comment. */
  /** A table created through Kernel alone: no kind, comment or property of this project. */
  static void createBareTable(String path, List<DeltaColumn> columns, Map<String, String> p) {
    Engine engine = DefaultEngine.create(new Configuration());
    Table.forPath(engine, path)
        .createTransactionBuilder(engine, "test", Operation.CREATE_TABLE)
        .withSchema(engine, DeltaTypes.toStruct(columns))
        .withTableProperties(engine, p)
        .withDomainMetadataSupported()
        .build(engine)
        .commit(engine, CloseableIterable.emptyIterable());
  }

  // ---------------------------------------------------------------------------------------------
  // Creation
  // ---------------------------------------------------------------------------------------------

  @Test
  void createdTableHasColumnsCommentsPropertiesAndDescription() {
    String path = path("facts");
    OpenResult result =
        tables.createIfAbsent(
            path,
            new TableDefinition(
                TableKind.FACTS, ORDERS, "Facts of the tests", Map.of("owner", "tests")));

    assertTrue(result.created());
    assertEquals(1, result.schemaVersion());
    assertEquals(0, result.migrationsApplied());
    TableInfo info = tables.describe(path);
    assertEquals("Facts of the tests", info.description());
    assertThat(info.properties(), hasEntry("mssql_cdc.schema_version", "1"));
    assertThat(info.properties(), hasEntry("mssql_cdc.table_kind", "facts"));
    assertThat(info.properties(), hasEntry("owner", "tests"));
    assertEquals(ORDERS, info.columns());
    assertEquals(1, info.schemaVersion());
    assertEquals("facts", info.kind().orElseThrow());
    // Version 0 creates the table, version 1 sets the table comment.
    assertEquals(1, result.version());
    List<CommitSummary> history = tables.history(path);
    assertThat(history, hasSize(2));
    assertEquals("CREATE TABLE", history.get(0).operation());
    assertTrue(history.get(1).metadataChanged());
  }

  @Test
  void createIfAbsentOpensAnExistingTableWithoutWriting() {
    String path = ordersTable("orders");
    long version = tables.version(path);

    OpenResult again = tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, ORDERS));

    assertEquals(false, again.created());
    assertEquals(version, again.version());
    assertEquals(version, tables.version(path));
  }

  @Test
  void creatingATableReadsItsLogOnceAndOpeningItAgainNotAtAll() {
    // Version 0's snapshot is kept from its commit; the table comment's commit starts on it, and
    // the one read is version 1 after that commit. A job's start creates bronze, facts and control.
    for (TableKind kind : List.of(TableKind.BRONZE, TableKind.FACTS, TableKind.CONTROL)) {
      String path = path("start-" + kind.propertyValue());
      long before = tables.snapshotLoads();
      long kernelBefore = tables.kernelSnapshotReads();

      TableDefinition definition =
          new TableDefinition(
              kind, ORDERS, kind.tableComment(), SmallFileCompaction.tableProperties(kind));
      OpenResult created = tables.createIfAbsent(path, definition);

      assertEquals(true, created.created());
      assertEquals(1, created.version());
      assertEquals(1, tables.snapshotLoads() - before, kind + " created");
      assertEquals(1, tables.kernelSnapshotReads() - kernelBefore, kind + " created: Kernel");
      tables.createIfAbsent(path, definition);
      tables.open(path, kind);
      assertEquals(1, tables.snapshotLoads() - before, kind + " opened again");
      assertEquals(1, tables.kernelSnapshotReads() - kernelBefore, kind + " opened: Kernel");
    }
  }

  @Test
  void migratingATableReadsItsLogOnlyAfterEachMetadataCommit() {
    String path = path("reconcile-loads");
    createBareTable(path, ORDERS, Map.of());
    long before = tables.snapshotLoads();
    long kernelBefore = tables.kernelSnapshotReads();

    OpenResult opened = tables.open(path, TableKind.RECONCILE);

    assertEquals(1, opened.migrationsApplied());
    // Version 0 read to find the migration missing; version 1 read after migration 1's commit,
    // which set the comment too: nothing else is read.
    assertEquals(2, tables.snapshotLoads() - before);
    assertEquals(2, tables.kernelSnapshotReads() - kernelBefore, "nothing read around the cache");
  }

  @Test
  void createLostToAConcurrentCreatorTakesThatTable() {
    // C133: the other writer creates the table between our check and our commit.
    String path = path("raced");
    DeltaTables other = DeltaTables.create();
    List<DeltaColumn> theirs = List.of(DeltaColumn.nullable("a", OutputType.STRING, null));

    OpenResult result =
        tables
            .lifecycle()
            .createIfAbsent(
                path,
                TableDefinition.of(TableKind.BRONZE, ORDERS),
                () -> other.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, theirs)));

    assertEquals(false, result.created());
    assertEquals(theirs, tables.describe(path).columns());
  }

  @Test
  void createFailureWithoutATableAfterwardsPropagates() {
    String path = path("bad");
    List<DeltaColumn> badName = List.of(DeltaColumn.nullable("a b", OutputType.INT, null));

    KernelException e =
        assertThrows(
            KernelException.class,
            () -> tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, badName)));
    assertEquals(
        "Column name 'a b' contains one of the unsupported ([ ,;{}()\\n\\t=]) characters.",
        e.getMessage());
    assertEquals(false, tables.exists(path));
  }

  // ---------------------------------------------------------------------------------------------
  // Appends, transaction ids, domain metadata
  // ---------------------------------------------------------------------------------------------

  @Test
  void twoBatchesAreAppendedAndAReplayIsSkipped() {
    String path = ordersTable("orders");
    long created = tables.version(path);

    CommitResult first =
        tables.append(
            path,
            ORDERS_SCHEMA,
            List.of(order(1, "a", "1.50"), order(2, "b", null)),
            "orders-app",
            1,
            Map.of());
    CommitResult second =
        tables.append(
            path, ORDERS_SCHEMA, List.of(order(3, "c", "3.00")), "orders-app", 2, Map.of());

    assertEquals(CommitResult.Status.COMMITTED, first.status());
    assertEquals(created + 1, first.version());
    assertEquals(created + 2, second.version());
    assertEquals(List.of(1L, 2L, 3L), ids(path));

    // A replay of batch 2 through the worker/committer path: files are written, commit skipped.
    List<DataFileAction> files =
        tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(3, "c", "3.00")));
    CommitResult replay = tables.commit(path, files, "orders-app", 2, Map.of());
    CommitResult olderReplay = tables.commit(path, files, "orders-app", 1, Map.of());

    assertEquals(CommitResult.Status.ALREADY_COMMITTED, replay.status());
    assertEquals(false, replay.committed());
    assertEquals(created + 2, replay.version());
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, olderReplay.status());
    assertEquals(List.of(1L, 2L, 3L), ids(path));
    assertEquals(created + 2, tables.version(path));
    // One commit per batch, each with its transaction id.
    List<CommitSummary> writes =
        tables.history(path).stream()
            .filter(c -> "orders-app".equals(c.txnAppId()))
            .collect(Collectors.toList());
    assertThat(writes, hasSize(2));
    assertEquals(OptionalLong.of(1), writes.get(0).txnVersion());
    assertEquals(OptionalLong.of(2), writes.get(1).txnVersion());
    assertEquals(1, writes.get(0).filesAdded());
  }

  @Test
  void dataFilesAreWrittenOnWorkersAndCommittedAfterSerialization() throws IOException {
    String path = ordersTable("orders");

    List<DataFileAction> files =
        tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(7, "x", "7.07")));
    assertThat(files, hasSize(1));
    assertEquals(1, files.get(0).rowCount());
    assertThat(files.get(0).path(), startsWith("file:"));
    assertThat(ids(path), empty());

    DataFileActionCoder coder = DataFileActionCoder.of();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    coder.encode(files.get(0), bytes);
    DataFileAction shipped = coder.decode(new ByteArrayInputStream(bytes.toByteArray()));
    assertEquals(files.get(0), shipped);

    CommitResult result = DeltaTables.create().commit(path, List.of(shipped), "w", 1, Map.of());

    assertEquals(1, result.filesAdded());
    List<Map<String, Object>> rows = tables.scan(path);
    assertThat(rows, hasSize(1));
    assertEquals(new BigDecimal("7.07"), rows.get(0).get("amount"));
    assertEquals("x", rows.get(0).get("customer"));
  }

  @Test
  void noRowsWriteNoFiles() {
    String path = ordersTable("orders");

    assertThat(tables.writeDataFiles(path, ORDERS_SCHEMA, List.of()), empty());
  }

  @Test
  void domainMetadataIsCommittedAtomicallyWithTheData() {
    String path = ordersTable("orders");
    String domain = "lakecdc.position";
    assertEquals(java.util.Optional.empty(), tables.domainMetadata(path, domain));

    tables.append(
        path,
        ORDERS_SCHEMA,
        List.of(order(1, "a", "1.00")),
        "app",
        1,
        Map.of(domain, "{\"end_lsn\":\"0x0000002A000001000011\"}"));
    assertEquals(
        "{\"end_lsn\":\"0x0000002A000001000011\"}",
        tables.domainMetadata(path, domain).orElseThrow());

    // The data and the position are in the same commit.
    CommitSummary last = tables.history(path).get((int) tables.version(path));
    assertEquals(1, last.filesAdded());
    assertEquals(List.of(domain), last.domains());
    assertEquals("app", last.txnAppId());

    tables.append(
        path,
        ORDERS_SCHEMA,
        List.of(order(2, "b", "2.00")),
        "app",
        2,
        Map.of(domain, "{\"end_lsn\":\"0x0000002A000001000021\"}"));
    // A replayed batch writes neither its rows nor its position.
    CommitResult replay =
        tables.commit(
            path,
            tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(9, "z", "9.00"))),
            "app",
            2,
            Map.of(domain, "{\"end_lsn\":\"0xFFFFFFFFFFFFFFFFFFFF\"}"));

    assertEquals(CommitResult.Status.ALREADY_COMMITTED, replay.status());
    assertEquals(
        "{\"end_lsn\":\"0x0000002A000001000021\"}",
        tables.domainMetadata(path, domain).orElseThrow());
    assertEquals(List.of(1L, 2L), ids(path));
  }

  @Test
  void latestTransactionVersionIsPerAppId() {
    String path = ordersTable("orders");
    assertEquals(OptionalLong.empty(), tables.latestTransactionVersion(path, "a"));

    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), "a", 5, Map.of());
    tables.append(path, ORDERS_SCHEMA, List.of(order(2, "a", null)), "a", 6, Map.of());
    tables.append(path, ORDERS_SCHEMA, List.of(order(3, "b", null)), "b", 1, Map.of());

    assertEquals(OptionalLong.of(6), tables.latestTransactionVersion(path, "a"));
    assertEquals(OptionalLong.of(1), tables.latestTransactionVersion(path, "b"));
    assertEquals(OptionalLong.empty(), tables.latestTransactionVersion(path, "c"));
  }

  /** Batches 2..12 of app id {@code app}, order id = batch, each setting domain lakecdc.test. */
  private void appendBatchesTwoToTwelve(String path) {
    for (int batch = 2; batch <= 12; batch++) {
      CommitResult result =
          tables.append(
              path,
              ORDERS_SCHEMA,
              List.of(order(batch, "a", null)),
              "app",
              batch,
              Map.of("lakecdc.test", "{\"batch\":" + batch + "}"));
      assertEquals(CommitResult.Status.COMMITTED, result.status());
    }
  }

  @Test
  void commitsReuseTheSnapshotTheyCommittedAndAReplayWritesNoFile() throws IOException {
    String path = ordersTable("orders");
    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), "app", 1, Map.of());
    long before = tables.snapshotLoads();
    appendBatchesTwoToTwelve(path);
    assertEquals(
        1,
        tables.snapshotLoads() - before,
        "each commit starts on the one before, but the one after the checkpoint at version 10");
    assertTrue(
        Files.exists(dir.resolve("orders/_delta_log/00000000000000000010.checkpoint.parquet")));

    long parquetFiles;
    try (var files = Files.list(dir.resolve("orders"))) {
      parquetFiles = files.filter(f -> f.toString().endsWith(".parquet")).count();
    }
    CommitResult replay =
        tables.append(path, ORDERS_SCHEMA, List.of(order(99, "b", null)), "app", 12, Map.of());
    assertEquals(CommitResult.Status.ALREADY_COMMITTED, replay.status());
    assertEquals(13, replay.version());
    try (var files = Files.list(dir.resolve("orders"))) {
      assertEquals(
          parquetFiles, files.filter(f -> f.toString().endsWith(".parquet")).count(), "no file");
    }
    assertEquals(1, tables.snapshotLoads() - before);
    assertEquals(
        List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L),
        ids(path),
        "a new instance reads the same");
    assertEquals(Optional.of("{\"batch\":12}"), tables.domainMetadata(path, "lakecdc.test"));
    assertEquals(
        Optional.of("{\"batch\":12}"), DeltaTables.create().domainMetadata(path, "lakecdc.test"));
  }

  @Test
  void eachCommitsSnapshotTakesTheClusteringColumnsOfTheSnapshotItWasMadeOn() {
    String path = ordersTable("orders");
    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), "app", 1, Map.of());
    long before = tables.clusteringCarried();
    appendBatchesTwoToTwelve(path);
    // Eleven commits, each on the snapshot of the one before (after the checkpoint at version 10,
    // on the snapshot read again from it), each resolving its read snapshot's columns.
    assertEquals(11, tables.clusteringCarried() - before);
    assertEquals(13, tables.version(path), "created at versions 0 and 1, batch 12 at 13");
    assertEquals(Optional.of("{\"batch\":12}"), tables.domainMetadata(path, "lakecdc.test"));
    assertEquals(
        List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L),
        ids(path),
        "a new instance reads the same");
  }

  @Test
  void aReusedSnapshotGivesWayToAnotherWritersCommitAndToATableCreatedAgain() throws IOException {
    String path = ordersTable("orders");
    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), "a", 1, Map.of());
    DeltaTables other = DeltaTables.create();
    other.append(path, ORDERS_SCHEMA, List.of(order(2, "b", null)), "b", 1, Map.of());

    assertEquals(List.of(1L, 2L), ids(path), "the other writer's commit is read");
    assertEquals(OptionalLong.of(1), tables.latestTransactionVersion(path, "b"));
    assertEquals(
        CommitResult.Status.ALREADY_COMMITTED,
        tables.append(path, ORDERS_SCHEMA, List.of(order(3, "b", null)), "b", 1, Map.of()).status(),
        "nor is its transaction written twice");
    long version = tables.version(path);
    String formerId = tables.tableId(path);

    deleteRecursively(dir.resolve("orders"));
    other.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, ORDERS));
    for (int id = 10; other.version(path) < version; id++) {
      other.append(path, ORDERS_SCHEMA, List.of(order(id, "c", null)), null, 0, Map.of());
    }
    assertEquals(version, other.version(path), "the new table is at the same version");

    assertEquals(other.tableId(path), tables.tableId(path));
    assertTrue(!formerId.equals(tables.tableId(path)), "the new table, not the former one");
    assertEquals(OptionalLong.empty(), tables.latestTransactionVersion(path, "a"));
    tables.append(path, ORDERS_SCHEMA, List.of(order(4, "a", null)), "a", 1, Map.of());
    assertEquals(List.of(4L, 10L, 11L), ids(path));
    assertEquals(
        List.of(4L, 10L, 11L),
        DeltaTables.create().scan(path).stream()
            .map(r -> (Long) r.get("id"))
            .sorted()
            .collect(Collectors.toList()));
  }

  private static void deleteRecursively(Path root) throws IOException {
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(p);
      }
    }
  }

  @Test
  void appendsWithoutAnAppIdAreNeverSkipped() {
    String path = ordersTable("orders");

    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), null, 0, Map.of());
    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), null, 0, Map.of());

    assertEquals(List.of(1L, 1L), ids(path));
  }

  @Test
  void aCheckpointIsWrittenEveryTenCommitsAndTheTableStillReads() throws IOException {
    String path = ordersTable("orders");
    for (int batch = 1; batch <= 10; batch++) {
      tables.append(path, ORDERS_SCHEMA, List.of(order(batch, "c", null)), "app", batch, Map.of());
    }

    assertTrue(
        Files.exists(dir.resolve("orders/_delta_log/00000000000000000010.checkpoint.parquet")));
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L), ids(path));
    assertEquals(OptionalLong.of(10), DeltaTables.create().latestTransactionVersion(path, "app"));
    assertEquals(
        TableKind.BRONZE.tableComment(), DeltaTables.create().describe(path).description());
  }

  @Test
  void anAppendRacingABlindAppendIsRebasedByKernel() {
    String path = ordersTable("orders");
    DeltaTables other = DeltaTables.create();
    List<DataFileAction> files =
        tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(1, "a", null)));

    CommitResult result =
        tables
            .commits()
            .commit(
                path,
                files,
                "app",
                1,
                Map.of(),
                () ->
                    other.append(
                        path, ORDERS_SCHEMA, List.of(order(2, "b", null)), "other", 1, Map.of()));

    assertEquals(CommitResult.Status.COMMITTED, result.status());
    assertEquals(List.of(1L, 2L), ids(path));
  }

  @Test
  void anAppendLosingToAMetadataChangeIsRebuiltAndCommitted() {
    String path = ordersTable("orders");
    DeltaTables other = DeltaTables.create();
    List<DataFileAction> files =
        tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(1, "a", null)));

    CommitResult result =
        tables
            .commits()
            .commit(
                path,
                files,
                "app",
                1,
                Map.of("d", "1"),
                () ->
                    other.addColumns(
                        path, List.of(DeltaColumn.nullable("note", OutputType.STRING, null))));

    assertEquals(CommitResult.Status.COMMITTED, result.status());
    assertEquals(List.of(1L), ids(path));
    assertThat(tables.scan(path).get(0).get("note"), nullValue());
    assertEquals("1", tables.domainMetadata(path, "d").orElseThrow());
  }

  @Test
  void aTwinCommitOfTheSameTransactionWinsAndThisOneIsSkipped() {
    String path = ordersTable("orders");
    DeltaTables twin = DeltaTables.create();
    List<DataFileAction> files =
        tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(1, "a", null)));

    CommitResult result =
        tables
            .commits()
            .commit(
                path,
                files,
                "app",
                1,
                Map.of(),
                () -> twin.commit(path, files, "app", 1, Map.of()));

    assertEquals(CommitResult.Status.ALREADY_COMMITTED, result.status());
    assertEquals(List.of(1L), ids(path));
  }

  // ---------------------------------------------------------------------------------------------
  // Rewrites
  // ---------------------------------------------------------------------------------------------

  @Test
  void rewriteOfAOneRowTableLeavesExactlyTheNewRow() {
    String path = ordersTable("control");
    tables.rewrite(path, ORDERS_SCHEMA, List.of(order(1, "old", "1.00")));

    CommitResult result = tables.rewrite(path, ORDERS_SCHEMA, List.of(order(2, "new", "2.00")));

    assertEquals(1, result.filesAdded());
    assertEquals(1, result.filesRemoved());
    List<Map<String, Object>> rows = tables.scan(path);
    assertThat(rows, hasSize(1));
    assertEquals(2L, rows.get(0).get("id"));
    assertEquals("new", rows.get(0).get("customer"));
    CommitSummary last = tables.history(path).get((int) result.version());
    assertEquals(1, last.filesRemoved());
    assertEquals(1, last.filesAdded());
  }

  @Test
  void rewriteWithATransactionIdIsSkippedOnReplay() {
    String path = ordersTable("control");
    tables.rewrite(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), "ctl", 1);

    CommitResult replay =
        tables.rewrite(path, ORDERS_SCHEMA, List.of(order(2, "b", null)), "ctl", 1);

    assertEquals(CommitResult.Status.ALREADY_COMMITTED, replay.status());
    assertEquals(List.of(1L), ids(path));
  }

  @Test
  void aRewriteThatLosesARaceFailsWithoutChangingTheTable() {
    String path = ordersTable("control");
    tables.rewrite(path, ORDERS_SCHEMA, List.of(order(1, "a", null)));
    DeltaTables other = DeltaTables.create();

    DeltaConflictException e =
        assertThrows(
            DeltaConflictException.class,
            () ->
                tables
                    .commits()
                    .rewrite(
                        path,
                        ORDERS_SCHEMA,
                        List.of(order(3, "c", null)),
                        null,
                        0,
                        () -> other.rewrite(path, ORDERS_SCHEMA, List.of(order(2, "b", null)))));

    assertThat(e.getMessage(), startsWith("Delta table " + path + ": the rewrite read version "));
    assertEquals(List.of(2L), ids(path));
  }

  @Test
  void rewriteWithNoRowsEmptiesTheTable() {
    String path = ordersTable("control");
    tables.append(path, ORDERS_SCHEMA, List.of(order(1, "a", null)), null, 0, Map.of());
    tables.append(path, ORDERS_SCHEMA, List.of(order(2, "a", null)), null, 0, Map.of());

    CommitResult result = tables.rewrite(path, ORDERS_SCHEMA, List.of());

    assertEquals(2, result.filesRemoved());
    assertThat(tables.scan(path), empty());
  }

  // ---------------------------------------------------------------------------------------------
  // Migrations and columns
  // ---------------------------------------------------------------------------------------------

  @Test
  void aTableWithoutTheVersionPropertyIsMigratedAndStamped() {
    String path = path("reconcile");
    createBareTable(path, ORDERS, Map.of());
    assertEquals(0, tables.describe(path).schemaVersion());

    OpenResult opened = tables.open(path, TableKind.RECONCILE);

    assertEquals(1, opened.migrationsApplied());
    assertEquals(1, opened.schemaVersion());
    TableInfo info = tables.describe(path);
    assertEquals(1, info.schemaVersion());
    assertEquals("reconcile", info.kind().orElseThrow());
    assertEquals(TableKind.RECONCILE.tableComment(), info.description());
    assertEquals(1, opened.version());

    // Nothing is written when the table is current.
    OpenResult again = tables.open(path, TableKind.RECONCILE);
    assertEquals(0, again.migrationsApplied());
    assertEquals(1, tables.version(path));
  }

  @Test
  void c172AControlTableAtVersion0GainsSilversPositionColumnsAndLostPeriods() {
    String path = path("control");
    createBareTable(
        path,
        List.of(
            DeltaColumn.required("table_name", OutputType.STRING, null),
            DeltaColumn.nullable("finalized_until", OutputType.TIMESTAMP_NTZ, "old text"),
            DeltaColumn.nullable("end_lsn", OutputType.STRING, null),
            DeltaColumn.nullable("end_commit_ts", OutputType.TIMESTAMP_NTZ, null),
            DeltaColumn.nullable("updated_at", OutputType.TIMESTAMP_NTZ, null)),
        Map.of());

    OpenResult opened = tables.open(path, TableKind.CONTROL);

    assertEquals(3, opened.migrationsApplied());
    assertEquals(3, opened.schemaVersion());
    TableInfo info = tables.describe(path);
    assertEquals(3, info.schemaVersion());
    assertEquals(
        List.of(
            "table_name",
            "finalized_until",
            "end_lsn",
            "end_commit_ts",
            "updated_at",
            "applied_lsn",
            "snapshot_lsn",
            "open_snapshot_lsn",
            "snapshot_wave",
            "lost_periods"),
        info.columns().stream().map(DeltaColumn::name).toList());
    assertEquals(
        DeltaColumn.nullable(
            "applied_lsn",
            OutputType.STRING,
            "Silver tables: highest bronze change LSN applied; NULL otherwise"),
        info.column("applied_lsn").orElseThrow());
    assertEquals(
        DeltaColumn.nullable(
            "snapshot_lsn",
            OutputType.STRING,
            "Silver tables: LSN of the bronze snapshot last rebuilt from"),
        info.column("snapshot_lsn").orElseThrow());
    assertEquals(
        DeltaColumn.nullable(
            "open_snapshot_lsn",
            OutputType.STRING,
            "Silver tables: S of the open chunked snapshot being applied wave by wave"),
        info.column("open_snapshot_lsn").orElseThrow());
    assertEquals(
        DeltaColumn.nullable(
            "snapshot_wave", OutputType.INT, "Silver tables: last wave of that snapshot applied"),
        info.column("snapshot_wave").orElseThrow());
    assertEquals(
        DeltaColumn.nullable(
            "lost_periods",
            OutputType.STRING,
            "JSON [{from, to}] of UTC spans [from, to) whose changes CDC cleanup purged before they"
                + " were read (skipped or re-snapshotted past): a period overlapping one is never"
                + " complete; NULL when none"),
        info.column("lost_periods").orElseThrow());
    assertEquals(
        "The verdict (UTC): every period ending at or before it is complete in the table, except"
            + " periods overlapping lost_periods; only moves forward",
        info.column("finalized_until").orElseThrow().comment());
    // A new control table has the columns migrations 2 and 3 add, with the same comments.
    List<DeltaColumn> current =
        org.lakecdc.transforms.finalization.ControlTable.definition().columns();
    assertEquals(current.subList(5, 10), info.columns().subList(5, 10));
    assertEquals(current.get(1), info.columns().get(1));
  }

  @Test
  void missingMigrationsRunInOrderAndStampEachVersion() {
    String path = path("facts");
    createBareTable(
        path,
        List.of(DeltaColumn.nullable("a", OutputType.STRING, "old a")),
        Map.of(TableProperties.SCHEMA_VERSION, "1"));
    Schema aOnly =
        DeltaColumn.toBeamSchema(List.of(DeltaColumn.nullable("a", OutputType.STRING, null)));
    tables.append(
        path, aOnly, List.of(Row.withSchema(aOnly).addValue("before").build()), null, 0, Map.of());
    List<Migration> migrations =
        List.of(
            new Migration(1, "first", List.of(new SchemaChange.SetTableComment("v1"))),
            new Migration(
                2,
                "add b",
                List.of(
                    new SchemaChange.AddColumns(
                        List.of(DeltaColumn.nullable("b", OutputType.INT, "added b"))))),
            new Migration(
                3,
                "comments",
                List.of(
                    new SchemaChange.SetColumnComment("A", "new a"),
                    new SchemaChange.SetColumnComment("absent", "ignored"),
                    new SchemaChange.SetTableComment("v3"))));

    OpenResult opened = tables.lifecycle().open(path, "facts", migrations, "unused");

    assertEquals(2, opened.migrationsApplied());
    assertEquals(3, opened.schemaVersion());
    TableInfo info = tables.describe(path);
    assertEquals("3", info.properties().get(TableProperties.SCHEMA_VERSION));
    assertEquals("v3", info.description());
    assertEquals(
        List.of(
            DeltaColumn.nullable("a", OutputType.STRING, "new a"),
            DeltaColumn.nullable("b", OutputType.INT, "added b")),
        info.columns());
    // Each migration is one commit stamping its version.
    List<CommitSummary> history = tables.history(path);
    CommitSummary second = history.get(history.size() - 2);
    CommitSummary third = history.get(history.size() - 1);
    assertTrue(second.metadataChanged());
    assertTrue(third.metadataChanged());
    assertEquals("Manual Update", third.operation());
    // The row written before the column existed reads it as NULL; new rows fill it.
    Schema ab = DeltaColumn.toBeamSchema(info.columns());
    tables.append(
        path, ab, List.of(Row.withSchema(ab).addValues("after", 2).build()), null, 0, Map.of());
    List<Row> rows = new ArrayList<>(tables.scan(path, ab));
    rows.sort(Comparator.comparing(r -> r.getString("a")));
    assertThat(rows.get(0).getString("a"), is("after"));
    assertThat(rows.get(0).getInt32("b"), is(2));
    assertThat(rows.get(1).getString("a"), is("before"));
    assertThat(rows.get(1).getInt32("b"), nullValue());
  }

  @Test
  void aMigrationAppliedBeforeACrashIsStamped() {
    // C135: the columns of migration 1 are already there, the stamp is not.
    String path = path("control");
    createBareTable(
        path,
        List.of(
            DeltaColumn.nullable("a", OutputType.STRING, null),
            DeltaColumn.nullable("b", OutputType.INT, "by hand")),
        Map.of());
    List<Migration> migrations =
        List.of(
            new Migration(
                1,
                "add b",
                List.of(
                    new SchemaChange.AddColumns(
                        List.of(DeltaColumn.nullable("B", OutputType.INT, "added b"))))));

    OpenResult opened = tables.lifecycle().open(path, "control", migrations, "comment");

    assertEquals(1, opened.schemaVersion());
    TableInfo info = tables.describe(path);
    assertEquals(1, info.schemaVersion());
    assertEquals(
        List.of(
            DeltaColumn.nullable("a", OutputType.STRING, null),
            DeltaColumn.nullable("b", OutputType.INT, "by hand")),
        info.columns());
  }

  @Test
  void aTableAtANewerVersionIsRefusedWithoutWriting() {
    String path = path("control");
    createBareTable(
        path,
        ORDERS,
        Map.of(TableProperties.SCHEMA_VERSION, "99", TableProperties.TABLE_KIND, "control"));

    IncompatibleTableException e =
        assertThrows(IncompatibleTableException.class, () -> tables.open(path, TableKind.CONTROL));

    assertEquals(
        "Delta table "
            + path
            + " is at control schema version 99 (mssql_cdc.schema_version), newer than 3, the"
            + " newest control version this build knows; upgrade lakecdc to write it",
        e.getMessage());
    assertEquals(0, tables.version(path));
    assertThrows(
        IncompatibleTableException.class,
        () -> tables.createIfAbsent(path, TableDefinition.of(TableKind.CONTROL, ORDERS)));
  }

  @Test
  void aTableOfAnotherKindIsRefused() {
    String path = ordersTable("orders");

    IncompatibleTableException e =
        assertThrows(IncompatibleTableException.class, () -> tables.open(path, TableKind.FACTS));

    assertEquals(
        "Delta table " + path + " is a bronze table (mssql_cdc.table_kind), not a facts table",
        e.getMessage());
  }

  @Test
  void addColumnsSkipsPresentColumnsAndARerunCommitsNothing() {
    // C134
    String path = path("t");
    tables.createIfAbsent(
        path,
        TableDefinition.of(
            TableKind.SILVER, List.of(DeltaColumn.nullable("a", OutputType.STRING, null))));
    List<DeltaColumn> wanted =
        List.of(
            DeltaColumn.nullable("b", OutputType.INT, "added"),
            DeltaColumn.nullable("A", OutputType.STRING, null));

    assertEquals(List.of("b"), tables.addColumns(path, wanted));
    long version = tables.version(path);
    assertEquals(List.of(), tables.addColumns(path, wanted));

    assertEquals(version, tables.version(path));
    assertThat(
        tables.describe(path).columns().stream()
            .map(DeltaColumn::name)
            .collect(Collectors.toList()),
        contains("a", "b"));
    assertEquals("added", tables.describe(path).column("B").orElseThrow().comment());
  }

  @Test
  void addedColumnsMustBeNullableAndNamedAsDeltaAllows() {
    String path = ordersTable("orders");

    assertThrows(
        IllegalArgumentException.class,
        () -> tables.addColumns(path, List.of(DeltaColumn.required("c", OutputType.INT, null))));
    assertThrows(
        KernelException.class,
        () -> tables.addColumns(path, List.of(DeltaColumn.nullable("c d", OutputType.INT, null))));
    assertEquals(ORDERS, tables.describe(path).columns());
  }

  // ---------------------------------------------------------------------------------------------
  // Values
  // ---------------------------------------------------------------------------------------------

  private static final List<DeltaColumn> ALL_TYPES =
      List.of(
          DeltaColumn.nullable("c_boolean", OutputType.BOOLEAN, "BOOLEAN"),
          DeltaColumn.nullable("c_smallint", OutputType.SMALLINT, "SMALLINT"),
          DeltaColumn.nullable("c_int", OutputType.INT, "INT"),
          DeltaColumn.nullable("c_bigint", OutputType.BIGINT, "BIGINT"),
          DeltaColumn.nullable("c_float", OutputType.FLOAT, "FLOAT"),
          DeltaColumn.nullable("c_double", OutputType.DOUBLE, "DOUBLE"),
          DeltaColumn.nullable("c_decimal", OutputType.decimal(18, 2), "DECIMAL(18,2)"),
          DeltaColumn.nullable("c_decimal38", OutputType.decimal(38, 10), "DECIMAL(38,10)"),
          DeltaColumn.nullable("c_decimal5", OutputType.decimal(5, 0), "DECIMAL(5,0)"),
          DeltaColumn.nullable("c_date", OutputType.DATE, "DATE"),
          DeltaColumn.nullable("c_ntz", OutputType.TIMESTAMP_NTZ, "TIMESTAMP_NTZ"),
          DeltaColumn.nullable("c_ts", OutputType.TIMESTAMP, "TIMESTAMP"),
          DeltaColumn.nullable("c_string", OutputType.STRING, "STRING"),
          DeltaColumn.nullable("c_binary", OutputType.BINARY, "BINARY"));

  @Test
  void everyOutputTypeRoundTrips() {
    String path = path("types");
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, ALL_TYPES));
    Schema schema = DeltaColumn.toBeamSchema(ALL_TYPES);
    Row high =
        Row.withSchema(schema)
            .addValues(
                true,
                Short.MAX_VALUE,
                Integer.MIN_VALUE,
                Long.MAX_VALUE,
                1.5f,
                -2.25e300,
                new BigDecimal("9999999999999999.99"),
                new BigDecimal("1234567890123456789012345678.0123456789"),
                new BigDecimal("-99999"),
                LocalDate.of(9999, 12, 31),
                LocalDateTime.of(2026, 9, 28, 13, 50, 0, 123_456_000),
                Instant.parse("2026-09-28T13:50:00.654321Z"),
                "ünïcødé ✓",
                new byte[] {0, 1, (byte) 0xFF})
            .build();
    Row low =
        Row.withSchema(schema)
            .addValues(
                false,
                Short.MIN_VALUE,
                0,
                -1L,
                -0.0f,
                Double.MIN_VALUE,
                new BigDecimal("-0.01"),
                new BigDecimal("0E-10"),
                new BigDecimal("0"),
                LocalDate.of(1, 1, 1),
                LocalDateTime.of(1900, 1, 1, 0, 0, 0, 1_000),
                Instant.parse("1969-12-31T23:59:59.999999Z"),
                "",
                new byte[0])
            .build();
    Row nulls = Row.nullRow(schema);

    tables.append(path, schema, List.of(high, low, nulls), null, 0, Map.of());

    List<Row> back = tables.scan(path, schema);
    assertThat(back, hasSize(3));
    Row highBack =
        back.stream().filter(r -> Boolean.TRUE.equals(r.getBoolean(0))).findFirst().orElseThrow();
    Row lowBack =
        back.stream().filter(r -> Boolean.FALSE.equals(r.getBoolean(0))).findFirst().orElseThrow();
    Row nullBack = back.stream().filter(r -> r.getBoolean(0) == null).findFirst().orElseThrow();
    assertRowEquals(high, highBack);
    assertRowEquals(low, lowBack);
    assertRowEquals(nulls, nullBack);
    assertEquals(ALL_TYPES, tables.describe(path).columns());
  }

  private static void assertRowEquals(Row expected, Row actual) {
    for (int i = 0; i < expected.getFieldCount(); i++) {
      String name = expected.getSchema().getField(i).getName();
      Object e = expected.getValue(i);
      Object a = actual.getValue(i);
      if (e instanceof byte[]) {
        assertArrayEquals((byte[]) e, (byte[]) a, name);
      } else if (e instanceof BigDecimal) {
        assertEquals(0, ((BigDecimal) e).compareTo((BigDecimal) a), name + ": " + e + " vs " + a);
      } else {
        assertEquals(e, a, name);
      }
    }
  }

  @Test
  void decimalsComeBackAtTheColumnScale() {
    String path = path("types");
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, ALL_TYPES));
    Schema schema = DeltaColumn.toBeamSchema(ALL_TYPES);
    Row row = Row.withSchema(schema).withFieldValue("c_decimal", new BigDecimal("12.5")).build();

    tables.append(path, schema, List.of(row), null, 0, Map.of());

    assertEquals(new BigDecimal("12.50"), tables.scan(path).get(0).get("c_decimal"));
  }

  @Test
  void rowsMayOmitNullableColumnsAndUseAnyCase() {
    String path = ordersTable("orders");
    Schema partial =
        Schema.builder().addInt64Field("ID").addNullableStringField("Customer").build();

    tables.append(
        path,
        partial,
        List.of(Row.withSchema(partial).addValues(4L, "d").build()),
        null,
        0,
        Map.of());

    Map<String, Object> row = tables.scan(path).get(0);
    assertEquals(4L, row.get("id"));
    assertEquals("d", row.get("customer"));
    assertThat(row.get("amount"), nullValue());
  }

  @Test
  void rowsThatDoNotFitTheTableAreRefusedWithTheColumnNamed() {
    String path = ordersTable("orders");
    Schema extra = Schema.builder().addInt64Field("id").addNullableStringField("note").build();
    Schema wrongType = Schema.builder().addStringField("id").build();
    Schema noId = Schema.builder().addNullableStringField("customer").build();

    IncompatibleTableException unknown =
        assertThrows(
            IncompatibleTableException.class,
            () ->
                tables.writeDataFiles(
                    path, extra, List.of(Row.withSchema(extra).addValues(1L, "n").build())));
    IncompatibleTableException type =
        assertThrows(
            IncompatibleTableException.class,
            () -> tables.writeDataFiles(path, wrongType, List.of()));
    IncompatibleTableException required =
        assertThrows(
            IncompatibleTableException.class, () -> tables.writeDataFiles(path, noId, List.of()));
    IllegalArgumentException rounding =
        assertThrows(
            IllegalArgumentException.class,
            () -> tables.writeDataFiles(path, ORDERS_SCHEMA, List.of(order(1, "a", "1.005"))));

    assertEquals(
        "Delta table "
            + path
            + " has no column 'note' for the rows' field of that name; add it first"
            + " (DeltaTables.addColumns)",
        unknown.getMessage());
    assertEquals(
        "Delta table "
            + path
            + " column 'id' is BIGINT, but the rows' field 'id' is STRING, which it does not hold"
            + " unchanged; widen the column first (DeltaTables.evolveSchema) or write a new table",
        type.getMessage());
    assertEquals(
        "Delta table " + path + " column 'id' is NOT NULL, but the rows have no field for it",
        required.getMessage());
    assertEquals(
        "Delta table "
            + path
            + " column 'amount' (DECIMAL(18,2)) cannot hold 1.005 without rounding",
        rounding.getMessage());
  }

  @Test
  void aNullInARequiredColumnIsRefused() {
    String path = ordersTable("orders");
    Schema nullableId = Schema.builder().addNullableInt64Field("id").build();

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                tables.writeDataFiles(
                    path, nullableId, List.of(Row.withSchema(nullableId).addValue(null).build())));

    assertEquals(
        "Delta table " + path + " column 'id' is NOT NULL, but row 0 of this write has NULL",
        e.getMessage());
  }

  @Test
  void readingAMissingTableSaysSo() {
    String path = path("missing");

    IllegalStateException e = assertThrows(IllegalStateException.class, () -> tables.scan(path));

    assertEquals("No Delta table at " + path, e.getMessage());
    assertEquals(false, tables.exists(path));
  }

  @Test
  void beamSchemaDescriptionsBecomeColumnComments() {
    Schema schema =
        Schema.builder()
            .addField(Schema.Field.of("_start_lsn", Schema.FieldType.STRING).withDescription("LSN"))
            .addNullableInt32Field("qty")
            .build();

    List<DeltaColumn> columns = DeltaColumn.fromBeamSchema(schema);

    assertThat(
        columns,
        contains(
            DeltaColumn.required("_start_lsn", OutputType.STRING, "LSN"),
            DeltaColumn.nullable("qty", OutputType.INT, null)));
    assertEquals(schema, DeltaColumn.toBeamSchema(columns));
  }

  @Test
  void everyKindIsAtVersionOneButControlWithItsCommentAndPropertyValue() {
    for (TableKind kind : TableKind.values()) {
      assertEquals(kind == TableKind.CONTROL ? 3 : 1, kind.currentVersion(), kind.name());
      assertEquals(1, kind.migrations().get(0).version());
      assertEquals(
          List.of(new SchemaChange.SetTableComment(kind.tableComment())),
          kind.migrations().get(0).changes());
      assertEquals(kind, TableKind.fromPropertyValue(kind.propertyValue().toUpperCase()));
    }
    assertEquals("control", TableKind.CONTROL.propertyValue());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> TableKind.fromPropertyValue("gold"));
    assertEquals(
        "Unknown table kind 'gold'; known: bronze, facts, control, silver, reconcile, history",
        e.getMessage());
  }
}
