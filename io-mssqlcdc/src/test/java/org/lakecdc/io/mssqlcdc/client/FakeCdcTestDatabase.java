package org.lakecdc.io.mssqlcdc.client;

import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** The simulator behind {@link CdcClientContract}: commits at the wall clock, like a server. */
final class FakeCdcTestDatabase implements CdcTestDatabase {
  private final FakeSqlServer server;

  FakeCdcTestDatabase(Path directory) {
    this.server = FakeSqlServer.open(directory);
  }

  @Override
  public CdcClientFactory clientFactory() {
    return server.clientFactory();
  }

  @Override
  public String createCapturedTable(
      String table, List<ColumnDefinition> columns, List<String> key) {
    server.createTable("dbo." + table, columns, key);
    return server.enableCdc("dbo." + table);
  }

  @Override
  public Lsn commit(List<Change> changes) {
    FakeSqlServer.Transaction tx = server.transaction(Instant.now().truncatedTo(ChronoUnit.MILLIS));
    for (Change c : changes) {
      String table = "dbo." + c.table();
      switch (c.operation()) {
        case 2 -> tx.insert(table, c.values());
        case 4 -> tx.update(table, c.key(), c.values());
        default -> tx.delete(table, c.key());
      }
    }
    return tx.commit();
  }

  @Override
  public void ddl(String table, String command) {
    server.ddl("dbo." + table, command);
  }

  @Override
  public void cleanup(String captureInstance, Lsn lowWatermark) {
    server.cleanup(captureInstance, lowWatermark);
  }

  @Override
  public void close() {}
}
