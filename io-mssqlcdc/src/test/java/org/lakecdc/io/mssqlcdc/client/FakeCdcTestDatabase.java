package org.lakecdc.io.mssqlcdc.client;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.fake.ManualClock;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The simulator behind {@link CdcClientContract}: commits at the time of its own clock, like a
 * server, a clock that starts at {@link #START} and moves only when a test moves it ({@link
 * #awaitClock}) or a commit is made (by {@link #COMMIT_STEP}), so that the commit times are exact
 * and no test sleeps for them.
 */
final class FakeCdcTestDatabase implements CdcTestDatabase {
  /** The clock's first time, with a fraction of a second as real clocks have. */
  static final Instant START = Instant.parse("2026-09-28T16:50:00.250Z");

  /** How far the clock moves on with each commit: the time a commit takes. */
  static final Duration COMMIT_STEP = Duration.ofMillis(5);

  private final ManualClock clock = new ManualClock(START);
  private final FakeSqlServer server;

  FakeCdcTestDatabase(Path directory) {
    this.server = FakeSqlServer.open(directory, clock);
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
    FakeSqlServer.Transaction tx = server.transaction();
    for (Change c : changes) {
      String table = "dbo." + c.table();
      switch (c.operation()) {
        case 2 -> tx.insert(table, c.values());
        case 4 -> tx.update(table, c.key(), c.values());
        default -> tx.delete(table, c.key());
      }
    }
    Lsn lsn = tx.commit();
    clock.advance(COMMIT_STEP);
    return lsn;
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
  public Instant now() {
    return clock.instant();
  }

  @Override
  public void awaitClock(Instant time) {
    clock.advanceTo(time);
  }

  @Override
  public void close() {}
}
