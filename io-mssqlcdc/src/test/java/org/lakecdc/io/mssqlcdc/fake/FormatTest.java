package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** The directory format (docs/fake-format.md, version 1): exact file contents. */
class FormatTest {
  @TempDir Path dir;

  private List<String> lines(String file) throws IOException {
    return Files.readAllLines(dir.resolve(file));
  }

  private FakeSqlServer ordersAtT0() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS, CaptureOptions.defaults().withCreateTime(T0));
    return db;
  }

  @Test
  void aCommitWritesSqlServerColumnNames() throws IOException {
    FakeSqlServer db = ordersAtT0();
    db.transaction(T0)
        .insert(ORDERS, order(1, "new", "10.50"))
        .update(ORDERS, List.of(1), Map.of("status", "paid"))
        .commit();
    assertEquals(
        List.of(
            "{\"__$start_lsn\":\"0x0000002A000001000001\",\"__$seqval\":\"0x0000002A000001000002\","
                + "\"__$operation\":2,\"__$command_id\":1,\"order_id\":1,\"status\":\"new\","
                + "\"amount\":\"10.50\",\"updated_at\":null}",
            "{\"__$start_lsn\":\"0x0000002A000001000001\",\"__$seqval\":\"0x0000002A000001000003\","
                + "\"__$operation\":3,\"__$command_id\":2,\"order_id\":1,\"status\":\"new\","
                + "\"amount\":\"10.50\",\"updated_at\":null}",
            "{\"__$start_lsn\":\"0x0000002A000001000001\",\"__$seqval\":\"0x0000002A000001000003\","
                + "\"__$operation\":4,\"__$command_id\":2,\"order_id\":1,\"status\":\"paid\","
                + "\"amount\":\"10.50\",\"updated_at\":null}"),
        lines("cdc.dbo_orders_CT.jsonl"));
    assertEquals(
        List.of(
            "{\"start_lsn\":\"0x0000002A000001000001\",\"tran_begin_time\":\"2026-09-28T13:50:00.000\","
                + "\"tran_end_time\":\"2026-09-28T13:50:00.000\",\"tran_id\":\"0x00000002A00000100000\"}"),
        lines("cdc.lsn_time_mapping.jsonl"));
    assertEquals(
        List.of("{\"order_id\":1,\"status\":\"paid\",\"amount\":\"10.50\",\"updated_at\":null}"),
        lines("dbo.orders.jsonl"));
    assertEquals(
        List.of(
            "{\"format_version\":1,\"time_zone\":\"UTC\",\"next_lsn\":\"0x0000002A000001000011\","
                + "\"clock_utc\":\"2026-09-28T13:50:00Z\"}"),
        lines("server.json"));
  }

  @Test
  void captureInstanceMetadataMirrorsTheCdcTables() throws IOException {
    ordersAtT0();
    assertEquals(
        List.of(
            "{\"capture_instance\":\"dbo_orders\",\"source_schema\":\"dbo\",\"source_table\":\"orders\","
                + "\"start_lsn\":\"0x0000002A000001000001\",\"create_date\":\"2026-09-28T13:50:00.000\","
                + "\"supports_net_changes\":true,\"index_name\":\"PK_orders\"}"),
        lines("cdc.change_tables.jsonl"));
    assertEquals(
        List.of(
            "{\"capture_instance\":\"dbo_orders\",\"column_name\":\"order_id\",\"column_id\":1,"
                + "\"column_ordinal\":1,\"column_type\":\"int\",\"is_computed\":false}",
            "{\"capture_instance\":\"dbo_orders\",\"column_name\":\"status\",\"column_id\":2,"
                + "\"column_ordinal\":2,\"column_type\":\"varchar\",\"character_maximum_length\":20,"
                + "\"is_computed\":false}",
            "{\"capture_instance\":\"dbo_orders\",\"column_name\":\"amount\",\"column_id\":3,"
                + "\"column_ordinal\":3,\"column_type\":\"decimal\",\"numeric_precision\":18,"
                + "\"numeric_scale\":2,\"is_computed\":false}",
            "{\"capture_instance\":\"dbo_orders\",\"column_name\":\"updated_at\",\"column_id\":4,"
                + "\"column_ordinal\":4,\"column_type\":\"datetime2\",\"datetime_precision\":7,"
                + "\"is_computed\":false}"),
        lines("cdc.captured_columns.jsonl"));
    assertEquals(
        List.of(
            "{\"capture_instance\":\"dbo_orders\",\"column_name\":\"order_id\",\"index_ordinal\":1,"
                + "\"column_id\":1}"),
        lines("cdc.index_columns.jsonl"));
    assertEquals(
        "{\"schema_name\":\"dbo\",\"table_name\":\"orders\",\"name\":\"order_id\",\"column_id\":1,"
            + "\"column_type\":\"int\",\"is_computed\":false,\"key_ordinal\":1}",
        lines("sys.columns.jsonl").get(0));
    assertEquals(
        List.of("{\"schema_name\":\"dbo\",\"name\":\"orders\",\"max_column_id_used\":4}"),
        lines("sys.tables.jsonl"));
  }

  @Test
  void valuesAreEncodedAsTheFormatSays() throws IOException {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.v",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("b", "varbinary(10)"),
            ColumnDefinition.of("u", "uniqueidentifier"),
            ColumnDefinition.of("dto", "datetimeoffset(7)"),
            ColumnDefinition.of("d", "date"),
            ColumnDefinition.of("dt", "datetime2(7)"),
            ColumnDefinition.of("bit", "bit")),
        List.of("id"));
    Map<String, Object> row = new HashMap<>();
    row.put("id", 1);
    row.put("b", new byte[] {(byte) 0xCA, (byte) 0xFE});
    row.put("u", "6f9619ff-8b86-d011-b42d-00c04fc964ff");
    row.put("dto", OffsetDateTime.parse("2026-09-28T13:50:01.1234567-03:00"));
    row.put("d", "2026-09-28");
    row.put("dt", LocalDateTime.parse("2026-09-28T13:50:00"));
    row.put("bit", false);
    db.loadRows("dbo.v", List.of(row));
    assertEquals(
        List.of(
            "{\"id\":1,\"b\":\"yv4=\",\"u\":\"6F9619FF-8B86-D011-B42D-00C04FC964FF\","
                + "\"dto\":\"2026-09-28T13:50:01.1234567-03:00\",\"d\":\"2026-09-28\","
                + "\"dt\":\"2026-09-28T13:50:00\",\"bit\":false}"),
        lines("dbo.v.jsonl"));
  }

  /** A directory written by hand, as an export of a real server's CDC history would be. */
  @Test
  void aHandWrittenExportIsReadable() throws IOException {
    Files.writeString(
        dir.resolve("server.json"),
        "{\"format_version\": 1, \"time_zone\": \"America/Sao_Paulo\"}\n");
    Files.writeString(
        dir.resolve("cdc.change_tables.jsonl"),
        "{\"capture_instance\": \"dbo_orders\", \"source_schema\": \"dbo\","
            + " \"source_table\": \"orders\", \"start_lsn\": \"0x0000002a000001f00003\","
            + " \"create_date\": \"2026-09-01 08:00:00.000\"}\n");
    Files.writeString(
        dir.resolve("cdc.captured_columns.jsonl"),
        "{\"capture_instance\": \"dbo_orders\", \"column_name\": \"order_id\","
            + " \"column_ordinal\": 1, \"column_type\": \"int\"}\n"
            + "{\"capture_instance\": \"dbo_orders\", \"column_name\": \"amount\","
            + " \"column_ordinal\": 2, \"column_type\": \"decimal\", \"numeric_precision\": 18,"
            + " \"numeric_scale\": 2}\n");
    Files.writeString(
        dir.resolve("cdc.lsn_time_mapping.jsonl"),
        "{\"start_lsn\": \"0x0000002A000001F00003\", \"tran_end_time\": \"2026-09-28 10:50:00.000\"}\n");
    Files.writeString(
        dir.resolve("cdc.dbo_orders_CT.jsonl"),
        "{\"__$start_lsn\": \"0x0000002A000001F00003\", \"__$end_lsn\": null,"
            + " \"__$seqval\": \"0x0000002A000001F00002\", \"__$operation\": 2,"
            + " \"__$update_mask\": \"0x03\", \"__$command_id\": 1, \"order_id\": 7,"
            + " \"amount\": 10.5}\n");
    Lsn lsn = Lsn.parse("0x0000002A000001F00003");
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(Optional.of(lsn), client.maxLsn());
      assertEquals(lsn, client.minLsn(CI));
      ChangeRow row =
          FakeScenarios.readAll(client, CI, List.of("order_id", "amount"), Lsn.ZERO, Lsn.MAX)
              .get(0);
      assertEquals(Arrays.asList(7, new BigDecimal("10.50")), row.values());
      assertEquals(Instant.parse("2026-09-28T13:50:00Z"), row.commitTime());
      assertEquals(1, row.commandId());
    }
  }

  @Test
  void aChangeTableOutOfOrderIsRefused() throws IOException {
    FakeSqlServer db = ordersAtT0();
    FakeScenarios.commitOrders(db, 2);
    Path ct = dir.resolve("cdc.dbo_orders_CT.jsonl");
    List<String> rows = Files.readAllLines(ct);
    Files.write(ct, List.of(rows.get(1), rows.get(0)));
    try (CdcClient client = db.openClient()) {
      CdcException e = assertThrows(CdcException.class, () -> FakeScenarios.readAllOrders(client));
      assertEquals(
          "cdc.dbo_orders_CT.jsonl:2: change rows must be sorted by __$start_lsn, __$command_id,"
              + " __$seqval, __$operation",
          e.getMessage());
    }
  }

  /**
   * SQL Server never holds a change row whose start LSN is not a commit of cdc.lsn_time_mapping: a
   * row below the mapping's last LSN without its mapping row (a writer stopped part-way, then
   * another wrote on) is refused by every read, naming the file, the LSN and the fix.
   */
  @Test
  void aChangeRowWithoutItsMappingRowBelowMaxLsnIsRefused() throws IOException {
    FakeSqlServer db = ordersAtT0();
    assertEquals(
        List.of(
            Lsn.parse("0x0000002A000001000001"),
            Lsn.parse("0x0000002A000001000011"),
            Lsn.parse("0x0000002A000001000021")),
        FakeScenarios.commitOrders(db, 3));
    Path mapping = dir.resolve("cdc.lsn_time_mapping.jsonl");
    List<String> commits = Files.readAllLines(mapping);
    Files.write(mapping, List.of(commits.get(0), commits.get(2)));
    String expected =
        dir.resolve("cdc.dbo_orders_CT.jsonl")
            + ":2: change row at __$start_lsn 0x0000002A000001000011 has no row in"
            + " cdc.lsn_time_mapping.jsonl, which goes on to 0x0000002A000001000021 (SQL Server"
            + " never holds such a row; a writer stopped part-way through): restore the directory"
            + " from a complete copy, or delete it and rebuild it (the demo database is rebuilt"
            + " when its directory is absent)";
    try (CdcClient client = db.openClient()) {
      assertEquals(
          expected,
          assertThrows(CdcException.class, () -> FakeScenarios.readAllOrders(client)).getMessage());
      assertEquals(
          expected,
          assertThrows(
                  CdcException.class,
                  () ->
                      FakeScenarios.readAll(
                          client,
                          CI,
                          List.of("order_id"),
                          Lsn.parse("0x0000002A000001000021"),
                          Lsn.MAX))
              .getMessage(),
          "also when the range starts after the row");
      assertEquals(
          expected,
          assertThrows(CdcException.class, () -> client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 2))
              .getMessage());
      assertEquals(
          1,
          FakeScenarios.readAll(
                  client, CI, List.of("order_id"), Lsn.ZERO, Lsn.parse("0x0000002A000001000001"))
              .size(),
          "a range that ends before the row reads");
    }
  }

  /**
   * Rows after the mapping's last LSN are a commit in progress (its mapping row, the commit point,
   * is written last): invisible to readers, as on SQL Server. A writer opening the directory
   * refuses it: with one writer per directory, that commit's writer stopped, and writing on would
   * leave the rows below max_lsn without their mapping row.
   */
  @Test
  void rowsAfterTheLastMappingRowAreACommitInProgress() throws IOException {
    FakeSqlServer db = ordersAtT0();
    FakeScenarios.commitOrders(db, 2);
    Path mapping = dir.resolve("cdc.lsn_time_mapping.jsonl");
    Files.write(mapping, List.of(Files.readAllLines(mapping).get(0)));
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(Lsn.parse("0x0000002A000001000001")),
          FakeScenarios.readAllOrders(client).stream().map(ChangeRow::startLsn).toList());
      assertEquals(1, client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 4).size());
    }
    CdcException e = assertThrows(CdcException.class, () -> FakeSqlServer.open(dir));
    assertEquals(
        dir.resolve("cdc.dbo_orders_CT.jsonl")
            + ":2: change row at __$start_lsn 0x0000002A000001000011 after the last commit of"
            + " cdc.lsn_time_mapping.jsonl (0x0000002A000001000001): a writer stopped part-way"
            + " through a commit, and writing on would leave the row without its mapping row;"
            + " restore the directory from a complete copy, or delete it and rebuild it",
        e.getMessage());
  }

  @Test
  void aShortLsnInAFileIsRefusedNotPadded() throws IOException {
    FakeSqlServer db = ordersAtT0();
    FakeScenarios.commitOrders(db, 1);
    Files.writeString(
        dir.resolve("cdc.lsn_time_mapping.jsonl"),
        "{\"start_lsn\": \"0x2A000001000001\", \"tran_end_time\": \"2026-09-28T13:50:00\"}\n");
    try (CdcClient client = db.openClient()) {
      assertEquals(
          "cdc.lsn_time_mapping.jsonl:1: field 'start_lsn': Invalid LSN: '0x2A000001000001'"
              + " (expected 0x followed by exactly 20 hexadecimal digits, e.g."
              + " 0x0000002A000001000001)",
          assertThrows(CdcException.class, client::maxLsn).getMessage());
    }
  }

  @Test
  void aNewerFormatVersionIsRefused() throws IOException {
    Files.writeString(dir.resolve("server.json"), "{\"format_version\": 2}\n");
    CdcException e = assertThrows(CdcException.class, () -> FakeSqlServer.open(dir));
    assertEquals("server.json: format_version 2 is newer than this reader's 1", e.getMessage());
  }

  @Test
  void aMalformedLineNamesItsFileAndLine() throws IOException {
    FakeSqlServer db = ordersAtT0();
    FakeScenarios.commitOrders(db, 1);
    Files.writeString(dir.resolve("cdc.lsn_time_mapping.jsonl"), "{\"start_lsn\": \"0xZZ\"}\n");
    try (CdcClient client = db.openClient()) {
      CdcException e = assertThrows(CdcException.class, client::maxLsn);
      assertTrue(
          e.getMessage().startsWith("cdc.lsn_time_mapping.jsonl:1: field 'tran_end_time'"),
          e.getMessage());
    }
  }

  @Test
  void reopeningReadsTheSourceRowsBack() {
    FakeSqlServer db = ordersAtT0();
    FakeScenarios.commitOrders(db, 3);
    assertEquals(db.rows(ORDERS), FakeSqlServer.open(dir).rows(ORDERS));
    Object[] ids =
        FakeSqlServer.open(dir).rows(ORDERS).stream().map(r -> r.get("order_id")).toArray();
    assertArrayEquals(new Object[] {0, 1, 2}, ids);
  }
}
