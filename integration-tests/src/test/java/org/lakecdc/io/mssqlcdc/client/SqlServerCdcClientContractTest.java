package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.lakecdc.io.mssqlcdc.client.CdcTestDatabase.Change;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * {@link CdcClientContract} against SQL Server 2022 in a container, plus what only a real server
 * shows (docs/scenarios.md C048, C229, C230, C242, C243). Runs in the integration profile ({@code
 * mvn -B -Pit verify}) where a Docker engine is available; otherwise every test reports skipped
 * with the reason.
 */
@ExtendWith(IntegrationCondition.class)
class SqlServerCdcClientContractTest extends CdcClientContract {
  private static SqlServerCdcTestDatabase server;

  @BeforeAll
  static void startSqlServer() throws Exception {
    server = SqlServerCdcTestDatabase.start();
  }

  @AfterAll
  static void stopSqlServer() {
    if (server != null) {
      server.stop();
    }
  }

  @Override
  CdcTestDatabase openDatabase(Path tempDir) {
    return server.shared();
  }

  @Test
  void c229NamesTheGrantUntilTheChangeTableIsGranted() {
    String t = table("priv_probe");
    String ci = server.createCapturedTable(t, ORDERS, List.of("order_id"), false);
    Lsn c = db.commit(List.of(Change.insert(t, order(1, "new", "1.00", "2026-09-28T13:50:00"))));
    ChangeQuery query = new ChangeQuery(ci, c, c, List.of("order_id"), true);
    ChangeTablePermissionError e =
        assertThrows(ChangeTablePermissionError.class, () -> client.readChanges(query).close());
    assertEquals(
        "GRANT SELECT ON cdc.[" + ci + "_CT] TO [" + SqlServerCdcTestDatabase.READER + "]",
        e.grant());
    assertTrue(e.getMessage().contains(e.grant()));
    assertThrows(ChangeTablePermissionError.class, () -> client.splitPoints(ci, c, c, 2));
    // Planning and inference work with SELECT on the table alone (documented CDC procedures).
    assertEquals(1, client.captureInstances(ci).size());
    assertEquals(5, client.capturedColumns(ci).size());
    server.grant(e.grant());
    List<ChangeRow> rows = new ArrayList<>();
    try (CloseableIterator<ChangeRow> it = client.readChanges(query)) {
      it.forEachRemaining(rows::add);
    }
    assertEquals(1, rows.size());
  }

  @Test
  void c242DetectsTheServerZoneByName() {
    String zone = (String) server.adminQuery("SELECT CURRENT_TIMEZONE_ID()");
    assertNotEquals("UTC", zone, "the container runs in " + SqlServerCdcTestDatabase.SERVER_ZONE);
    try (SqlCdcClient sql = (SqlCdcClient) server.readerConfig().open()) {
      assertEquals(zone, sql.timeZone());
    }
  }

  @Test
  void c243ConvertsAlikeWithTheDetectedAndTheExplicitZone() {
    String t = table("zones");
    String ci = db.createCapturedTable(t, ORDERS, List.of("order_id"));
    Lsn c = db.commit(List.of(Change.insert(t, order(1, "new", "1.00", "2026-09-28T13:50:00"))));
    String zone = (String) server.adminQuery("SELECT CURRENT_TIMEZONE_ID()");
    try (SqlCdcClient named =
            (SqlCdcClient)
                server.readerConfig().withSourceTimeZone(SourceTimeZone.named(zone)).open();
        SqlCdcClient utc =
            (SqlCdcClient) server.readerConfig().withSourceTimeZone(SourceTimeZone.utc()).open()) {
      assertEquals(client.commit(c), named.commit(c));
      // The server's clock is 3 hours behind UTC: read as if it were UTC it is 3 hours early.
      assertEquals(
          client.commit(c).orElseThrow().commitTime().minusSeconds(3 * 3600),
          utc.commit(c).orElseThrow().commitTime());
      assertEquals(1, named.splitPoints(ci, c, c, 1).size());
    }
  }
}
