package org.lakecdc.io.mssqlcdc.client;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * A database with CDC that {@link CdcClientContract} writes to and reads through a {@link
 * CdcClient}: the simulator ({@link FakeCdcTestDatabase}) or SQL Server in a container ({@link
 * SqlServerCdcTestDatabase}). Writes are what a DBA or an application does; reads go only through
 * the client under test.
 */
public interface CdcTestDatabase extends AutoCloseable {
  /** One statement of a transaction. */
  record Change(int operation, String table, List<?> key, Map<String, ?> values) {
    /** {@code INSERT} of a row by column name. */
    public static Change insert(String table, Map<String, ?> row) {
      return new Change(2, table, null, row);
    }

    /** {@code UPDATE ... SET values WHERE key}. */
    public static Change update(String table, List<?> key, Map<String, ?> values) {
      return new Change(4, table, key, values);
    }

    /** {@code DELETE ... WHERE key}. */
    public static Change delete(String table, List<?> key) {
      return new Change(1, table, key, null);
    }
  }

  /** Opens clients of the database as the reading login. */
  CdcClientFactory clientFactory();

  /**
   * Creates {@code dbo.<table>} with a primary key and enables CDC on it with the default capture
   * instance {@code dbo_<table>}, capturing every column; returns once capture has processed the
   * enable (the instance's minimum LSN is known).
   *
   * @return the capture instance name
   */
  String createCapturedTable(String table, List<ColumnDefinition> columns, List<String> key);

  /**
   * Commits one transaction and waits until capture has written its change rows.
   *
   * @return its commit LSN
   */
  Lsn commit(List<Change> changes);

  /** Runs a DDL statement on {@code dbo.<table>} and waits until the DDL history records it. */
  void ddl(String table, String command);

  /** CDC cleanup of a capture instance up to {@code lowWatermark} (a commit LSN). */
  void cleanup(String captureInstance, Lsn lowWatermark);

  /**
   * The server's clock now, UTC: commits are stamped from it. SQL Server's is the machine's wall
   * clock (the container shares the host's).
   *
   * @return the current time of the server's clock
   */
  default Instant now() {
    return Instant.now();
  }

  /**
   * Returns once the server's clock has reached {@code time}, so that the next commit is stamped
   * {@code time} or later. SQL Server: waits for the wall clock. The simulator moves its clock
   * there at once.
   *
   * @param time the time the clock must have reached
   * @throws InterruptedException when interrupted while waiting
   */
  default void awaitClock(Instant time) throws InterruptedException {
    Object clock = new Object();
    synchronized (clock) {
      for (Instant now = now(); now.isBefore(time); now = now()) {
        clock.wait(Math.max(1, Duration.between(now, time).toMillis()));
      }
    }
  }

  @Override
  void close();
}
