package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS_COLUMN_NAMES;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The change table's streaming read: lines split as {@code BufferedReader} splits them, lines of
 * another shape than the writer's read as the tree reader read them, and the index built only when
 * a read needs it to find where to start.
 */
class ChangeTableReaderTest {
  @TempDir Path dir;

  private Path changeTable() {
    return dir.resolve(FakeFormat.changeTableFile(CI));
  }

  /** Two inserts, an update (two rows), a delete: four commits. */
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
    return db;
  }

  /**
   * Rewrites the change table with its line at {@code index} (from 0) passed through {@code edit}.
   */
  private void editLine(int index, UnaryOperator<String> edit) throws IOException {
    List<String> lines = new ArrayList<>(Files.readAllLines(changeTable()));
    lines.set(index, edit.apply(lines.get(index)));
    Files.write(changeTable(), lines);
  }

  private List<ChangeRow> read(Lsn from, Lsn to) {
    return FakeScenarios.readAll(new FileBackedCdcClient(dir), CI, ORDERS_COLUMN_NAMES, from, to);
  }

  private static List<String> lines(ChangeLines lines) {
    List<String> out = new ArrayList<>();
    while (lines.next()) {
      out.add(
          lines.where()
              + "="
              + new String(
                  Arrays.copyOfRange(
                      lines.bytes(), lines.offset(), lines.offset() + lines.length()),
                  StandardCharsets.UTF_8));
    }
    return out;
  }

  @Test
  void linesEndAtLineFeedsCarriageReturnsAndBothAsBufferedReaderEndsThem() throws Exception {
    Path file = dir.resolve("lines.jsonl");
    Files.writeString(file, "a\r\nbb\rc\n\n" + "d".repeat(70_000) + "\ne");
    List<String> read;
    try (ChangeLines lines =
        new ChangeLines(file, FileChannel.open(file, StandardOpenOption.READ), 0, 0)) {
      read = lines(lines);
    }
    assertEquals(
        List.of(
            "lines.jsonl:1=a",
            "lines.jsonl:2=bb",
            "lines.jsonl:3=c",
            "lines.jsonl:4=",
            "lines.jsonl:5=" + "d".repeat(70_000),
            "lines.jsonl:6=e"),
        read);
    // From an offset, numbered after the lines before it.
    try (ChangeLines lines =
        new ChangeLines(file, FileChannel.open(file, StandardOpenOption.READ), 3, 1)) {
      assertTrue(lines.next());
      assertEquals("lines.jsonl:2", lines.where());
      assertEquals(2, lines.length());
    }
  }

  @Test
  void aLineIsAsciiWhenNoneOfItsBytesIsNotFoundInTheSamePassThatSplitsTheLines() throws Exception {
    Path file = dir.resolve("ascii.jsonl");
    // The first line fills the 64 KiB buffer but one byte: its \r is the buffer's last byte and
    // the \n after it comes with the next read, and is skipped there.
    Files.writeString(
        file,
        "x".repeat((1 << 16) - 1) + "\r\ncaf\u00e9\r\nplain\n\u00e9" + "y".repeat(70_000),
        StandardCharsets.UTF_8);
    List<String> read = new ArrayList<>();
    try (ChangeLines lines =
        new ChangeLines(file, FileChannel.open(file, StandardOpenOption.READ), 0, 0)) {
      while (lines.next()) {
        read.add(lines.where() + " " + lines.length() + " " + lines.ascii());
      }
    }
    assertEquals(
        List.of(
            "ascii.jsonl:1 65535 true",
            "ascii.jsonl:2 5 false",
            "ascii.jsonl:3 5 true",
            "ascii.jsonl:4 70002 false"),
        read);
  }

  @Test
  void linesOfAnotherShapeThanTheWritersReadAsTheTreeReaderReadThem() throws Exception {
    List<Lsn> l = new ArrayList<>();
    history(l);
    // Line 1: the status column named in upper case (matched ignoring case).
    editLine(0, line -> line.replace("\"status\":", "\"STATUS\":"));
    // Line 2: the amount as a JSON number with a fraction, and the status twice (the last wins).
    editLine(
        1,
        line ->
            line.replace("\"amount\":\"2.00\"", "\"amount\":2.5")
                .replace("\"status\":\"new\"", "\"status\":\"new\",\"status\":\"twice\""));
    List<ChangeRow> rows = read(Lsn.ZERO, l.get(2));
    assertEquals(5, rows.size());
    assertEquals(Arrays.asList(1, "new", new BigDecimal("1.00"), null), rows.get(0).values());
    assertEquals(Arrays.asList(2, "twice", new BigDecimal("2.50"), null), rows.get(1).values());
    assertEquals(Arrays.asList(1, "new", new BigDecimal("1.00"), null), rows.get(2).values());
    assertEquals(Arrays.asList(1, "paid", new BigDecimal("1.00"), null), rows.get(3).values());
    assertEquals(Arrays.asList(2, "new", new BigDecimal("2.00"), null), rows.get(4).values());
    assertEquals(List.of(2, 2, 3, 4, 1), rows.stream().map(ChangeRow::operation).toList());
    // The rows of one commit share one start LSN object.
    assertSame(rows.get(2).startLsn(), rows.get(3).startLsn());
    assertEquals(l.get(1), rows.get(3).startLsn());
  }

  @Test
  void theParserOverTheLinesHandsALineWithMoreAfterItsObjectToAParserOfItsOwn() throws Exception {
    List<Lsn> l = new ArrayList<>();
    history(l);
    List<ChangeRow> expected = read(Lsn.ZERO, l.get(2));
    // More after the object: white space, and another value (a line's own parser reads the first
    // object and stops there, as it always did); the lines after them read as before.
    editLine(1, line -> line + "   ");
    editLine(2, line -> line + " {\"ignored\":1}");
    List<ChangeRow> rows = read(Lsn.ZERO, l.get(2));
    assertEquals(expected, rows);
  }

  @Test
  void integersOfEveryLengthReadAsJacksonReadsThem() throws Exception {
    List<Lsn> l = new ArrayList<>();
    history(l);
    // Seven digits, nine digits (and a command id of nine), ten digits with a sign (still an int:
    // Jackson reads it; and a command id of ten), then a negative one-digit value.
    editLine(0, line -> line.replace("\"order_id\":1,", "\"order_id\":1234567,"));
    editLine(
        1,
        line ->
            line.replace("\"order_id\":2,", "\"order_id\":123456789,")
                .replaceFirst("\"__\\$command_id\":\\d+", "\"__\\$command_id\":987654321"));
    editLine(2, line -> line.replace("\"order_id\":1,", "\"order_id\":-2147483648,"));
    editLine(
        3,
        line ->
            line.replace("\"order_id\":1,", "\"order_id\":-7,")
                .replaceFirst("\"__\\$command_id\":\\d+", "\"__\\$command_id\":2147483647"));
    List<ChangeRow> rows = read(Lsn.ZERO, l.get(2));
    assertEquals(
        Arrays.asList(1234567, 123456789, -2147483648, -7, 2),
        rows.stream().map(r -> r.values().get(0)).toList());
    assertEquals(987654321, rows.get(1).commandId());
    assertEquals(2147483647, rows.get(3).commandId());
    // Ten digits beyond an int: the column's own refusal, naming the line.
    editLine(4, line -> line.replace("\"order_id\":2,", "\"order_id\":2147483648,"));
    CdcException e = assertThrows(CdcException.class, () -> read(Lsn.ZERO, l.get(2)));
    assertTrue(
        e.getMessage().startsWith(changeTable().getFileName() + ":5: Column 'order_id'"),
        e.getMessage());
    assertTrue(e.getMessage().contains("Arithmetic overflow"), e.getMessage());
  }

  @Test
  void anIncompleteLineFailsNamingItsLineAndTheLastLineWithoutAnEndToo() throws Exception {
    List<Lsn> l = new ArrayList<>();
    history(l);
    List<String> original = Files.readAllLines(changeTable());
    String name = changeTable().getFileName().toString();
    // Line 3 cut in the middle of its object, the lines after it complete.
    List<String> cut = new ArrayList<>(original);
    cut.set(2, original.get(2).substring(0, original.get(2).length() / 2));
    Files.write(changeTable(), cut);
    CdcException e = assertThrows(CdcException.class, () -> read(Lsn.ZERO, l.get(2)));
    assertTrue(
        e.getMessage().startsWith(name + ":3: invalid JSON: Unexpected end-of-input"),
        e.getMessage());
    // The file's last line cut after a value (no line end): a writer's append in progress.
    String last = original.get(original.size() - 1);
    Files.writeString(
        changeTable(),
        String.join("\n", original.subList(0, original.size() - 1))
            + "\n"
            + last.substring(0, last.lastIndexOf(',')));
    e = assertThrows(CdcException.class, () -> read(Lsn.ZERO, l.get(2)));
    assertTrue(
        e.getMessage()
            .startsWith(name + ":" + original.size() + ": invalid JSON: Unexpected end-of-input"),
        e.getMessage());
  }

  @Test
  void aReadOfAFileAppendedToWhileItIsReadReturnsItsRange() throws Exception {
    List<Lsn> l = new ArrayList<>();
    FakeSqlServer db = history(l);
    List<ChangeRow> expected = read(Lsn.ZERO, l.get(2));
    List<ChangeRow> rows = new ArrayList<>();
    try (CloseableIterator<ChangeRow> it =
        new FileBackedCdcClient(dir)
            .readChanges(new ChangeQuery(CI, Lsn.ZERO, l.get(2), ORDERS_COLUMN_NAMES, true))) {
      rows.add(it.next());
      rows.add(it.next());
      // Two commits appended while the read is between rows.
      db.transaction(minutes(3)).insert(ORDERS, order(3, "new", "3.00")).commit();
      db.transaction(minutes(4)).insert(ORDERS, order(4, "new", "4.00")).commit();
      it.forEachRemaining(rows::add);
    }
    assertEquals(expected, rows);
    assertEquals(7, read(Lsn.ZERO, Lsn.MAX).size());
  }

  @Test
  void aReadFromTheFirstRowBuildsNoIndexAndAReadFromLaterBuildsIt() throws Exception {
    List<Lsn> l = new ArrayList<>();
    history(l);
    try (ReaderCache.Opened opened = ReaderCache.changeTableFrom(changeTable(), l.get(0))) {
      assertNull(opened.index());
    }
    assertEquals(5, read(Lsn.ZERO, l.get(2)).size());
    try (ReaderCache.Opened opened = ReaderCache.changeTableFrom(changeTable(), l.get(1))) {
      assertNotNull(opened.index());
      assertEquals(3, opened.index().groups());
    }
    assertEquals(List.of(l.get(1), l.get(1), l.get(2)), starts(read(l.get(1), l.get(2))));
  }

  @Test
  void aReadOfWhatWasAppendedUsesTheEarlierIndexWithoutExtendingIt() throws Exception {
    List<Lsn> l = new ArrayList<>();
    FakeSqlServer db = history(l);
    assertEquals(3, read(l.get(1), l.get(2)).size());
    ChangeTableIndex before;
    try (ReaderCache.Opened opened = ReaderCache.changeTableFrom(changeTable(), l.get(1))) {
      before = opened.index();
    }
    l.add(db.transaction(minutes(3)).insert(ORDERS, order(3, "new", "3.00")).commit());
    List<ChangeRow> appended = read(l.get(3), l.get(3));
    assertEquals(List.of(l.get(3)), starts(appended));
    assertEquals(Arrays.asList(3, "new", new BigDecimal("3.00"), null), appended.get(0).values());
    try (ReaderCache.Opened opened = ReaderCache.changeTableFrom(changeTable(), l.get(3))) {
      assertSame(before, opened.index());
      assertFalse(opened.index().stamp.equals(FileStamp.of(changeTable())));
    }
    // A read that must seek into the indexed part brings the index up to the file.
    assertEquals(List.of(l.get(2), l.get(3)), starts(read(l.get(2), l.get(3))));
    try (ReaderCache.Opened opened = ReaderCache.changeTableFrom(changeTable(), l.get(2))) {
      assertEquals(4, opened.index().groups());
    }
  }

  private static List<Lsn> starts(List<ChangeRow> rows) {
    return rows.stream().map(ChangeRow::startLsn).toList();
  }
}
