package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.V2;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.readAll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * {@link FakeExport} through the {@link CdcClient} interface, then {@link FakeReplay}: the imported
 * database reads as the source did (commits, low watermarks, instances, captured columns, DDL,
 * change rows, table rows), whole or replayed in steps; what a replay refuses.
 */
class ExportReplayTest {
  @TempDir Path dir;

  /**
   * A server in {@code America/New_York} across the 2026-11-01 fall-back: {@code dbo.orders} with
   * {@value FakeScenarios#CI} (c0..c4 insert orders 0..4 at 05:00..05:04 UTC, {@code ...001} to
   * {@code ...041}), {@value FakeScenarios#V2} capturing {@code note} too (S = {@code ...051}), an
   * update of order 1 ({@code ...051}), an idle entry ({@code ...061}), a column added ({@code
   * ...071}), a delete of order 2 ({@code ...081}), then a cleanup of {@value FakeScenarios#CI} to
   * {@code ...021}.
   */
  private FakeSqlServer source() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.timeZone(ZoneId.of("America/New_York"));
    List<ColumnDefinition> columns = new ArrayList<>(FakeScenarios.ORDERS_COLUMNS);
    columns.add(ColumnDefinition.of("note", "varchar(20)"));
    db.createTable(ORDERS, columns, List.of("order_id"));
    Instant t = Instant.parse("2026-11-01T05:00:00Z");
    db.enableCdc(
        ORDERS,
        CaptureOptions.defaults()
            .withCapturedColumns(FakeScenarios.ORDERS_COLUMN_NAMES)
            .withCreateTime(t));
    for (int i = 0; i < 5; i++) {
      Map<String, Object> row = FakeScenarios.order(i, "new", i + ".50");
      row.put("note", "n" + i);
      db.transaction(t.plusSeconds(60L * i)).insert(ORDERS, row).commit();
    }
    db.enableCdc(ORDERS, CaptureOptions.defaults().withName(V2).withCreateTime(t.plusSeconds(300)));
    db.transaction(t.plusSeconds(360))
        .update(ORDERS, List.of(1), Map.of("status", "paid", "note", "p"))
        .commit();
    db.idle(t.plusSeconds(660));
    db.addColumn(ORDERS, "channel", SqlServerType.parse("varchar(10)"));
    db.transaction(t.plusSeconds(720)).delete(ORDERS, List.of(2)).commit();
    db.cleanup(CI, lsn(2));
    return db;
  }

  /** Everything a job reads of a database, through the client, as comparable values. */
  private static Map<String, Object> view(Path directory) {
    Map<String, Object> view = new LinkedHashMap<>();
    try (CdcClient client = new FileBackedCdcClient(directory)) {
      List<Commit> commits = new ArrayList<>();
      for (Optional<Commit> c = client.nthCommitAfter(Lsn.ZERO, 1);
          c.isPresent();
          c = client.nthCommitAfter(c.get().lsn(), 1)) {
        commits.add(c.get());
      }
      view.put("commits", commits);
      view.put("max_lsn", client.maxLsn());
      for (String ci : List.of(CI, V2)) {
        view.put(ci + " min_lsn", client.minLsn(ci));
        view.put(ci + " instances", client.captureInstances(ci));
        view.put(ci + " columns", client.capturedColumns(ci));
        view.put(ci + " ddl", client.ddlHistory(ci, Lsn.ZERO, Lsn.MAX));
        List<String> names = client.capturedColumns(ci).stream().map(c -> c.name()).toList();
        view.put(ci + " rows", readAll(client, ci, names, Lsn.ZERO, Lsn.MAX));
      }
      List<List<Object>> rows = new ArrayList<>();
      try (CloseableIterator<List<Object>> it =
          client.readTable(
              new TableQuery(
                  "dbo",
                  "orders",
                  List.of("order_id", "status", "amount", "updated_at", "note"),
                  List.of("order_id"),
                  Optional.empty(),
                  Optional.empty(),
                  IsolationLevel.READ_COMMITTED))) {
        it.forEachRemaining(rows::add);
      }
      view.put("table", rows);
    }
    return view;
  }

  private FakeExport.Summary export(Path to) {
    try (CdcClient client = new FileBackedCdcClient(dir.resolve("source"))) {
      return FakeExport.export(client, List.of(CI), Optional.empty(), Optional.empty(), true, to);
    }
  }

  @Test
  void anExportImportedWholeReadsAsTheSource() {
    source();
    FakeExport.Summary exported = export(dir.resolve("export"));
    assertEquals(List.of(CI, V2), exported.captureInstances());
    assertEquals(List.of("dbo.orders"), exported.tables());
    assertEquals(Optional.of(lsn(2)), exported.firstCommit().map(Commit::lsn));
    assertEquals(Optional.of(lsn(8)), exported.lastCommit().map(Commit::lsn));
    // c2, c3, c4, the update, the idle entry, the delete.
    assertEquals(6, exported.commits());
    // dbo_orders: c2..c4, update (3, 4), delete = 6; v2: update (3, 4), delete = 3.
    assertEquals(9, exported.changeRows());
    assertEquals(2, exported.ddlRows());
    assertEquals(4, exported.tableRows());

    FakeReplay.Step step =
        FakeReplay.importInto(
            dir.resolve("export"), dir.resolve("target"), Optional.empty(), OptionalInt.empty());
    assertEquals(6, step.commits());
    assertEquals(9, step.changeRows());
    assertEquals(2, step.ddlRows());
    assertEquals(List.of(CI, V2), step.instancesAdded());
    assertEquals(0, step.remainingCommits());
    assertEquals(Optional.of(Instant.parse("2026-11-01T05:12:00Z")), step.lastCommitTime());
    assertEquals(view(dir.resolve("source")), view(dir.resolve("target")));
    // The exported directory itself reads as the source too (a job's --fakePath can be it).
    assertEquals(view(dir.resolve("source")), view(dir.resolve("export")));
  }

  @Test
  void anExportReplayedInStepsEndsAsTheSourceAndEachStepEndsOnItsCommit() {
    source();
    export(dir.resolve("export"));
    Path target = dir.resolve("target");
    Path export = dir.resolve("export");

    FakeReplay.Step first =
        FakeReplay.importInto(export, target, Optional.empty(), OptionalInt.of(2));
    assertEquals(Optional.of(lsn(2)), first.firstCommit());
    assertEquals(Optional.of(lsn(3)), first.lastCommit());
    assertEquals(2, first.changeRows());
    assertEquals(List.of(CI), first.instancesAdded());
    assertEquals(4, first.remainingCommits());
    try (CdcClient client = new FileBackedCdcClient(target)) {
      assertEquals(Optional.of(lsn(3)), client.maxLsn());
      assertEquals(lsn(2), client.minLsn(CI));
      assertEquals(1, client.captureInstances(CI).size());
    }

    FakeReplay.Step second =
        FakeReplay.replay(export, target, Optional.of(lsn(6)), OptionalInt.empty());
    // c4 (...041), the update (...051, where v2 starts), the idle entry (...061).
    assertEquals(3, second.commits());
    assertEquals(Optional.of(lsn(4)), second.firstCommit());
    assertEquals(Optional.of(lsn(6)), second.lastCommit());
    assertEquals(List.of(V2), second.instancesAdded());
    // c4 in dbo_orders; the update in both (2 + 2).
    assertEquals(5, second.changeRows());
    assertEquals(0, second.ddlRows());
    try (CdcClient client = new FileBackedCdcClient(target)) {
      assertEquals(Optional.of(lsn(6)), client.maxLsn());
      assertEquals(2, client.captureInstances(CI).size());
    }

    FakeReplay.Step last = FakeReplay.replay(export, target, Optional.empty(), OptionalInt.empty());
    assertEquals(1, last.commits());
    assertEquals(2, last.ddlRows());
    assertEquals(0, last.remainingCommits());
    assertEquals(view(dir.resolve("source")), view(target));

    FakeReplay.Step nothing =
        FakeReplay.replay(export, target, Optional.empty(), OptionalInt.empty());
    assertEquals(0, nothing.commits());
    assertEquals(Optional.of(lsn(8)), nothing.maxLsn());
  }

  @Test
  void aReplayIntoADatabaseThatWroteItsOwnCommitIsRefusedAndWritesNothing() throws Exception {
    source();
    Path export = dir.resolve("export");
    Path target = dir.resolve("target");
    export(export);
    FakeReplay.importInto(export, target, Optional.empty(), OptionalInt.of(2));
    FakeSqlServer.open(target).idle(minutes(100_000));
    byte[] before = Files.readAllBytes(target.resolve(FakeFormat.LSN_TIME_MAPPING));
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> FakeReplay.replay(export, target, Optional.empty(), OptionalInt.empty()));
    assertEquals(
        target
            + " holds commit "
            + lsn(4)
            + ", which "
            + export
            + " does not: replay continues only a database imported from that export",
        e.getMessage());
    assertEquals(new String(before), Files.readString(target.resolve(FakeFormat.LSN_TIME_MAPPING)));
  }

  @Test
  void anImportIntoANonEmptyDirectoryAndAnExportOverOneAreRefused() throws Exception {
    source();
    Path export = dir.resolve("export");
    export(export);
    Path busy = Files.createDirectories(dir.resolve("busy"));
    Files.writeString(busy.resolve("notes.txt"), "mine");
    IllegalArgumentException imported =
        assertThrows(
            IllegalArgumentException.class,
            () -> FakeReplay.importInto(export, busy, Optional.empty(), OptionalInt.empty()));
    assertEquals(busy + " is not empty: give a new or empty directory", imported.getMessage());
    IllegalArgumentException exported =
        assertThrows(IllegalArgumentException.class, () -> export(busy));
    assertEquals(busy + " is not empty: give a new or empty directory", exported.getMessage());
    assertEquals(List.of(busy.resolve("notes.txt")), Files.list(busy).toList());
    assertFalse(Files.exists(dir.resolve(".busy.exporting")));
  }

  @Test
  void anExportBoundedByAnLsnRangeHoldsOnlyThatRange() {
    source();
    Path export = dir.resolve("export");
    FakeExport.Summary summary;
    try (CdcClient client = new FileBackedCdcClient(dir.resolve("source"))) {
      summary =
          FakeExport.export(
              client, List.of(V2), Optional.of(lsn(3)), Optional.of(lsn(6)), false, export);
    }
    assertEquals(List.of(CI, V2), summary.captureInstances());
    assertEquals(4, summary.commits());
    assertEquals(List.of("dbo.orders"), summary.tablesWithoutRows());
    try (CdcClient client = new FileBackedCdcClient(export)) {
      assertEquals(lsn(3), client.minLsn(CI));
      assertEquals(lsn(5), client.minLsn(V2));
      assertEquals(Optional.of(lsn(6)), client.maxLsn());
      // c3, c4 and the update's two rows in dbo_orders.
      assertEquals(4, readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX).size());
      assertEquals(Instant.parse("2026-11-01T05:11:00Z"), client.commit(lsn(6)).get().commitTime());
    }
  }
}
