package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.SplitPoint;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The fake's side of scenario C275: one scripted history whose answers the SQL Server contract test
 * compares by ordinal in {@code cdc.lsn_time_mapping}. Script, one transaction each: insert
 * (1,'a'); insert (2,'b') and (3,'c'); update 1 a→a2; delete 2; insert (4,'d').
 */
class ParityScriptTest {
  private static final String T = "dbo.t";
  private static final String CI = "dbo_t";

  @TempDir Path dir;
  private FakeSqlServer db;

  @BeforeEach
  void script() {
    db = FakeSqlServer.open(dir);
    db.createTable(
        T,
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("v", "varchar(10)")),
        List.of("id"));
    db.enableCdc(T);
    db.transaction(T0).insert(T, Map.of("id", 1, "v", "a")).commit();
    db.transaction(minutes(1))
        .insert(T, Map.of("id", 2, "v", "b"))
        .insert(T, Map.of("id", 3, "v", "c"))
        .commit();
    db.transaction(minutes(2)).update(T, List.of(1), Map.of("v", "a2")).commit();
    db.transaction(minutes(3)).delete(T, List.of(2)).commit();
    db.transaction(minutes(4)).insert(T, Map.of("id", 4, "v", "d")).commit();
  }

  /** (ordinal, rank of (command_id, seqval) in the commit, operation, id, v) per change row. */
  private static List<List<Object>> ranked(List<ChangeRow> rows) {
    List<List<Object>> out = new ArrayList<>();
    Lsn commit = null;
    int rank = -1;
    ChangeRow previous = null;
    for (ChangeRow r : rows) {
      if (!r.startLsn().equals(commit)) {
        commit = r.startLsn();
        rank = 0;
      } else if (!(r.seqval().equals(previous.seqval())
          && r.commandId().equals(previous.commandId()))) {
        rank++;
      }
      int ordinal =
          r.startLsn().toBigInteger().subtract(lsn(0).toBigInteger()).shiftRight(4).intValueExact();
      out.add(List.of(ordinal, rank, r.operation(), r.values().get(0), r.values().get(1)));
      previous = r;
    }
    return out;
  }

  @Test
  void changeRowsByOrdinalAndRank() {
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(
              List.of(0, 0, 2, 1, "a"),
              List.of(1, 0, 2, 2, "b"),
              List.of(1, 1, 2, 3, "c"),
              List.of(2, 0, 3, 1, "a"),
              List.of(2, 0, 4, 1, "a2"),
              List.of(3, 0, 1, 2, "b"),
              List.of(4, 0, 2, 4, "d")),
          ranked(FakeScenarios.readAll(client, CI, List.of("id", "v"), Lsn.ZERO, Lsn.MAX)));
    }
  }

  @Test
  void nthCommitAfterTheFirstsPredecessor() {
    try (CdcClient client = db.openClient()) {
      Lsn start = client.decrementLsn(lsn(0));
      for (int k = 1; k <= 6; k++) {
        assertEquals(
            lsn(Math.min(k - 1, 4)), client.nthCommitAfter(start, k).orElseThrow().lsn(), "k=" + k);
      }
    }
  }

  @Test
  void incrementLandsJustPastEachEntryWhichHasNoTime() {
    try (CdcClient client = db.openClient()) {
      for (int k = 0; k < 5; k++) {
        Lsn next = client.incrementLsn(lsn(k));
        assertTrue(next.isAfter(lsn(k)) && next.isBefore(lsn(k + 1)));
        assertTrue(client.commit(lsn(k)).isPresent());
        assertEquals(Optional.empty(), client.commit(next));
      }
    }
  }

  private static SplitPoint tile(int ordinal, long rows) {
    return new SplitPoint(lsn(ordinal), lsn(ordinal).increment(), rows);
  }

  @Test
  void splitPointsForOneTwoThreeSevenAndTenTiles() {
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(tile(4, 7)), client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 1));
      assertEquals(List.of(tile(2, 4), tile(4, 3)), client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 2));
      assertEquals(
          List.of(tile(1, 3), tile(2, 2), tile(4, 2)),
          client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 3));
      List<SplitPoint> perRow =
          List.of(
              tile(0, 1), tile(1, 1), tile(1, 1), tile(2, 1), tile(2, 1), tile(3, 1), tile(4, 1));
      assertEquals(perRow, client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 7));
      assertEquals(perRow, client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 10));
    }
  }

  @Test
  void cleanupToTheUpdatesCommitKeepsItsRowsAndLater() {
    db.cleanup(CI, lsn(2));
    try (CdcClient client = db.openClient()) {
      assertEquals(lsn(2), client.minLsn(CI));
      assertEquals(
          List.of(2, 2, 3, 4),
          ranked(FakeScenarios.readAll(client, CI, List.of("id", "v"), Lsn.ZERO, Lsn.MAX)).stream()
              .map(r -> r.get(0))
              .toList());
    }
  }
}
