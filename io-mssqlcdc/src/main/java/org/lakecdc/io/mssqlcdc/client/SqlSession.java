package org.lakecdc.io.mssqlcdc.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.NoSuchElementException;
import java.util.Objects;
import javax.sql.DataSource;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.util.BackOff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@link SqlCdcClient}'s session with SQL Server: the connection taken from the pool at the
 * first call and given back when the client closes, each call retried on a transient error ({@link
 * TransientErrors}) on a new connection after a backoff ({@link RetryPolicy}), and the session
 * settings a source-table read changes ({@code SET LOCK_TIMEOUT}, {@code SET TRANSACTION ISOLATION
 * LEVEL}, {@link #sourceReadPrefix}) reset before the connection goes back to the pool, so that the
 * next client to borrow it (a change read, which must not run under a lock timeout) starts from the
 * server's defaults. Also the JDBC helpers of streamed reads. Not thread-safe, as its client.
 */
final class SqlSession implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SqlSession.class);

  /** Rows fetched per round trip of a streamed read. */
  static final int FETCH_SIZE = 10_000;

  /** Where connections come from and go back to; the test seam. */
  interface Connector {
    /**
     * Takes a connection.
     *
     * @return an open connection
     * @throws SQLException when the server refuses or cannot be reached
     */
    Connection connect() throws SQLException;

    /**
     * Gives a connection back (closes it): a pooled one goes back to its pool.
     *
     * @param connection the connection {@link #connect} returned
     * @param sessionChanged whether a source-table read changed its session settings
     * @throws SQLException when closing fails
     */
    default void release(Connection connection, boolean sessionChanged) throws SQLException {
      connection.close();
    }

    /**
     * Connections from the {@link DataSource} {@code provider} returns on this JVM (Beam's JDBC
     * form: {@code JdbcIO.DataSourceProviderFromDataSourceConfiguration} keeps one pool per
     * configuration). A connection whose session a source-table read changed gets {@link
     * CdcStatements#RESET_SESSION} before it goes back; one that cannot be reset is aborted, so the
     * pool drops it instead of lending it again.
     *
     * @param provider the pool of the source, built on the worker
     * @return the connector
     */
    static Connector pooled(SerializableFunction<Void, DataSource> provider) {
      Objects.requireNonNull(provider, "provider");
      return new Connector() {
        @Override
        public Connection connect() throws SQLException {
          return provider.apply(null).getConnection();
        }

        @Override
        public void release(Connection connection, boolean sessionChanged) throws SQLException {
          try {
            if (sessionChanged) {
              try (Statement reset = connection.createStatement()) {
                reset.execute(CdcStatements.RESET_SESSION);
              } catch (SQLException e) {
                LOG.debug("Resetting a SQL Server session failed: {}", describe(e));
                connection.abort(Runnable::run);
              }
            }
          } finally {
            connection.close();
          }
        }
      };
    }
  }

  private final Connector connector;
  private final RetryPolicy retry;
  private final long lockTimeoutMs;
  private Connection connection;
  private boolean sessionChanged;
  private boolean closed;

  /**
   * A session that connects at its first call.
   *
   * @param connector where connections come from
   * @param retry how transient errors are retried
   * @param lockTimeoutMs the lock timeout of source-table reads, or -1 for none
   */
  SqlSession(Connector connector, RetryPolicy retry, long lockTimeoutMs) {
    this.connector = Objects.requireNonNull(connector, "connector");
    this.retry = Objects.requireNonNull(retry, "retry");
    this.lockTimeoutMs = lockTimeoutMs;
  }

  /**
   * The session prefix of a source-table read ({@link CdcStatements#sourceReadPrefix}); marks the
   * session as changed, so it is reset before its connection goes back.
   *
   * @param isolation the read's isolation level
   * @return {@code SET LOCK_TIMEOUT n; SET TRANSACTION ISOLATION LEVEL ...; }
   */
  String sourceReadPrefix(IsolationLevel isolation) {
    sessionChanged = true;
    return CdcStatements.sourceReadPrefix(lockTimeoutMs, isolation);
  }

  /** Gives the connection back; idempotent. Later calls raise {@link IllegalStateException}. */
  @Override
  public void close() {
    closed = true;
    dropConnection();
  }

  /** A unit of work on the connection. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code work} on the connection, retrying transient errors on a new connection.
   *
   * @throws CdcException wrapping a database error that is not transient, or the last transient one
   *     after the retries
   */
  <T> T call(String operation, Work<T> work) {
    if (closed) {
      throw new IllegalStateException("This SqlCdcClient is closed");
    }
    BackOff backOff = retry.backOff();
    for (int attempt = 1; ; attempt++) {
      try {
        return work.run(connection());
      } catch (SQLException e) {
        if (!TransientErrors.isTransient(e)) {
          throw failure(operation, e);
        }
        dropConnection();
        long waited;
        try {
          waited = retry.waitBeforeRetry(backOff);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw failure(operation, e);
        }
        if (waited == BackOff.STOP) {
          throw failure(operation, e);
        }
        LOG.warn(
            "{} failed: {}; retry {} of {} on a new connection after {} ms",
            operation,
            describe(e),
            attempt,
            RetryPolicy.MAX_RETRIES,
            waited);
      }
    }
  }

  private Connection connection() throws SQLException {
    if (connection == null) {
      connection = connector.connect();
    }
    return connection;
  }

  private void dropConnection() {
    Connection c = connection;
    connection = null;
    boolean changed = sessionChanged;
    sessionChanged = false;
    if (c != null) {
      try {
        connector.release(c, changed);
      } catch (SQLException e) {
        LOG.debug("Closing a SQL Server connection failed: {}", describe(e));
      }
    }
  }

  static CdcException failure(String operation, SQLException e) {
    return new CdcException(operation + " failed: " + describe(e), e);
  }

  static String describe(SQLException e) {
    return e.getMessage()
        + " (SQL Server error "
        + e.getErrorCode()
        + ", SQLSTATE "
        + e.getSQLState()
        + ")";
  }

  static PreparedStatement prepareStreaming(Connection c, String sql) throws SQLException {
    PreparedStatement ps =
        c.prepareStatement(sql, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
    ps.setFetchSize(FETCH_SIZE);
    return ps;
  }

  static String[] types(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    String[] types = new String[md.getColumnCount()];
    for (int i = 0; i < types.length; i++) {
      types[i] = JdbcValues.baseType(md.getColumnTypeName(i + 1));
    }
    return types;
  }

  static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      LOG.debug("Closing a statement failed", e);
    }
  }

  /** Streams the rows of an open result set; closes it and its statement at the end. */
  abstract static class ResultIterator<T> extends LookAheadIterator<T> {
    private final ResultSet rs;
    private final String operation;

    ResultIterator(ResultSet rs, String operation) {
      this.rs = rs;
      this.operation = operation;
    }

    abstract T row(ResultSet r) throws SQLException;

    @Override
    protected T computeNext() {
      try {
        if (rs.next()) {
          return row(rs);
        }
        finish();
        return null;
      } catch (SQLException e) {
        close();
        throw failure(operation, e);
      }
    }

    @Override
    protected void release() {
      try {
        Statement st = rs.getStatement();
        rs.close();
        if (st != null) {
          st.close();
        }
      } catch (SQLException e) {
        LOG.debug("Closing a result set failed: {}", describe(e));
      }
    }
  }

  /** An iterator of no rows. */
  static <T> CloseableIterator<T> emptyIterator() {
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        return false;
      }

      @Override
      public T next() {
        throw new NoSuchElementException();
      }

      @Override
      public void close() {}
    };
  }
}
