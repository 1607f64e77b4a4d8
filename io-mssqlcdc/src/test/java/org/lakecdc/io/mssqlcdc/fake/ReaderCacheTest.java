package org.lakecdc.io.mssqlcdc.fake;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS_COLUMN_NAMES;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The reader's caches and change table index: {@code estimatedChangeRows} counts exactly what
 * {@code readChanges} returns, a write after an index was built is seen by the next call, and a
 * read that starts in the middle of a change table answers (rows, errors, line numbers) as a scan
 * from its start does.
 */
class ReaderCacheTest {
  @TempDir Path dir;

  private Path changeTable() {
    return dir.resolve(FakeFormat.changeTableFile(CI));
  }

  private static List<Integer> orderIds(List<ChangeRow> rows) {
    List<Integer> ids = new ArrayList<>();
    for (ChangeRow r : rows) {
      ids.add((Integer) r.values().get(0));
    }
    return ids;
  }

  private static List<ChangeRow> read(CdcClient client, Lsn from, Lsn to) {
    return FakeScenarios.readAll(client, CI, ORDERS_COLUMN_NAMES, from, to);
  }

  /** Two inserts, an update (two rows: before and after image), a delete, an idle entry. */
  private FakeSqlServer history(List<Lsn> lsns) {
    FakeSqlServer db = FakeScenarios.orders(dir);
    lsns.add(
        db.transaction(T0)
            .insert(ORDERS, order(1, "new", "1.00"))
            .insert(ORDERS, order(2, "new", "2.00"))
            .commit());
    lsns.add(
        db.transaction(minutes(1)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit());
    lsns.add(db.transaction(minutes(2)).delete(ORDERS, List.of(2)).commit());
    lsns.add(db.idle(minutes(3)));
    return db;
  }

  @Test
  void estimatedChangeRowsCountsTheRowsOfTheRangeThatReadChangesReturns() throws Exception {
    List<Lsn> l = new ArrayList<>();
    history(l);
    // A commit in progress: its change row is written, its mapping row not yet.
    String first = Files.readAllLines(changeTable()).get(0);
    Lsn inProgress = l.get(3).increment();
    Files.writeString(
        changeTable(),
        first.replace(l.get(0).toString(), inProgress.toString()) + "\n",
        StandardOpenOption.APPEND);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(5, client.estimatedChangeRows(CI, Lsn.ZERO, Lsn.MAX));
      assertEquals(5, read(client, Lsn.ZERO, Lsn.MAX).size());
      assertEquals(2, client.estimatedChangeRows(CI, l.get(0), l.get(0)));
      assertEquals(2, client.estimatedChangeRows(CI, l.get(1), l.get(1)), "before and after image");
      assertEquals(3, client.estimatedChangeRows(CI, l.get(0).increment(), l.get(3)));
      assertEquals(4, client.estimatedChangeRows(CI, l.get(0), l.get(2).decrement()));
      assertEquals(0, client.estimatedChangeRows(CI, l.get(3), Lsn.MAX), "idle, then in progress");
      assertEquals(0, client.estimatedChangeRows(CI, l.get(2), l.get(1)), "from after to");
      assertEquals(
          2, client.estimatedChangeRows("DBO_ORDERS", l.get(1), l.get(1)), "name ignoring case");
      assertThrows(
          CaptureInstanceNotFoundError.class,
          () -> client.estimatedChangeRows("dbo_nothing", Lsn.ZERO, Lsn.MAX));
    }
  }

  @Test
  void estimatedChangeRowsOfAnInstanceWithoutChangesIsZero() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(0, client.estimatedChangeRows(CI, Lsn.ZERO, Lsn.MAX));
    }
  }

  @Test
  void aCommitWrittenAfterTheIndexWasBuiltIsSeenByTheNextCall() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 0, 3);
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(0, 1, 2), orderIds(read(client, Lsn.ZERO, Lsn.MAX)));
      assertEquals(3, client.estimatedChangeRows(CI, Lsn.ZERO, Lsn.MAX));
      List<Lsn> more = FakeScenarios.commitOrders(db, 3, 2);
      assertEquals(Optional.of(more.get(1)), client.maxLsn());
      assertEquals(more.get(1), client.nthCommitAfter(l.get(2), 2).orElseThrow().lsn());
      assertEquals(5, client.estimatedChangeRows(CI, Lsn.ZERO, Lsn.MAX));
      assertEquals(List.of(3, 4), orderIds(read(client, l.get(2).increment(), Lsn.MAX)));
      assertEquals(List.of(2, 3), orderIds(read(client, l.get(2), more.get(0))));
    }
    try (CdcClient other = new FileBackedCdcClient(dir)) {
      assertEquals(List.of(0, 1, 2, 3, 4), orderIds(read(other, Lsn.ZERO, Lsn.MAX)));
    }
  }

  @Test
  void aCleanupThatRewritesTheChangeTableIsSeenByTheNextCall() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 0, 4);
    try (CdcClient client = db.openClient()) {
      assertEquals(4, read(client, Lsn.ZERO, Lsn.MAX).size());
      db.cleanup(CI, l.get(2));
      assertEquals(List.of(2, 3), orderIds(read(client, Lsn.ZERO, Lsn.MAX)));
      assertEquals(2, client.estimatedChangeRows(CI, Lsn.ZERO, Lsn.MAX));
      assertEquals(l.get(2), client.minLsn(CI));
      FakeScenarios.commitOrders(db, 4, 1);
      assertEquals(List.of(3, 4), orderIds(read(client, l.get(3), Lsn.MAX)));
    }
  }

  @Test
  void aChangeTableDroppedAndCreatedAgainIsReadAfresh() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.commitOrders(db, 0, 3);
    try (CdcClient client = db.openClient()) {
      assertEquals(3, read(client, Lsn.ZERO, Lsn.MAX).size());
      db.disableCdc(CI);
      db.enableCdc(ORDERS);
      List<Lsn> after = FakeScenarios.commitOrders(db, 10, 1);
      assertEquals(List.of(10), orderIds(read(client, Lsn.ZERO, Lsn.MAX)));
      assertEquals(1, client.estimatedChangeRows(CI, Lsn.ZERO, after.get(0)));
    }
  }

  /**
   * A row without mapping row below the mapping's end (a writer stopped part-way through) is
   * refused by every read that a scan from the start would refuse it in: also one whose range
   * starts after it, naming the same line.
   */
  @Test
  void aReadThatStartsAfterAnUnmappedRowStillRefusesItNamingItsLine() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 0, 3);
    try (CdcClient client = db.openClient()) {
      assertEquals(3, read(client, Lsn.ZERO, Lsn.MAX).size());
      List<String> lines = new ArrayList<>(Files.readAllLines(changeTable()));
      Lsn orphan = l.get(0).increment();
      lines.add(1, lines.get(0).replace(l.get(0).toString(), orphan.toString()));
      Files.write(changeTable(), lines, StandardCharsets.UTF_8);
      CdcException e = assertThrows(CdcException.class, () -> read(client, l.get(2), l.get(2)));
      assertThat(e.getMessage(), containsString(FakeFormat.changeTableFile(CI) + ":2: "));
      assertThat(e.getMessage(), containsString("__$start_lsn " + orphan));
      assertEquals(List.of(0), orderIds(read(client, Lsn.ZERO, l.get(0))), "the scan stops first");
    }
  }

  /** A value error in a range read from its middle names the line as a scan from the start. */
  @Test
  void aReadFromTheMiddleNamesLinesAsAScanFromTheStart() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 0, 4);
    List<String> lines = new ArrayList<>(Files.readAllLines(changeTable()));
    lines.set(2, lines.get(2).replace("\"2.00\"", "\"two\""));
    lines.add(1, "");
    Files.write(changeTable(), lines, StandardCharsets.UTF_8);
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(3), orderIds(read(client, l.get(3), Lsn.MAX)));
      CdcException e = assertThrows(CdcException.class, () -> read(client, l.get(2), l.get(3)));
      assertThat(e.getMessage(), containsString(FakeFormat.changeTableFile(CI) + ":4: "));
    }
  }

  /**
   * A line that is not one JSON object (here: complete metadata fields, then a broken value) stops
   * the index where a scan from the start stops: a read from after it still refuses it, naming its
   * line, and the rows before it are read.
   */
  @Test
  void aLineThatIsNotJsonIsRefusedByAReadThatStartsAfterIt() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 0, 4);
    List<String> lines = new ArrayList<>(Files.readAllLines(changeTable()));
    lines.set(1, lines.get(1).replace("\"1.00\"", "[\"1.00\""));
    Files.write(changeTable(), lines, StandardCharsets.UTF_8);
    try (CdcClient client = db.openClient()) {
      CdcException e = assertThrows(CdcException.class, () -> read(client, l.get(3), Lsn.MAX));
      assertThat(e.getMessage(), containsString(FakeFormat.changeTableFile(CI) + ":2: "));
      assertThat(e.getMessage(), containsString("invalid JSON"));
    }
  }

  /** Rows out of order stop a read that reaches them, also when the read starts after them. */
  @Test
  void rowsOutOfOrderAreRefusedByAReadThatReachesThem() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 0, 4);
    List<String> lines = new ArrayList<>(Files.readAllLines(changeTable()));
    String second = lines.remove(1);
    lines.add(2, second);
    Files.write(changeTable(), lines, StandardCharsets.UTF_8);
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(0), orderIds(read(client, Lsn.ZERO, l.get(0))));
      CdcException e = assertThrows(CdcException.class, () -> read(client, l.get(3), Lsn.MAX));
      assertThat(e.getMessage(), containsString(FakeFormat.changeTableFile(CI) + ":3: "));
      assertThat(e.getMessage(), containsString("must be sorted"));
    }
  }
}
