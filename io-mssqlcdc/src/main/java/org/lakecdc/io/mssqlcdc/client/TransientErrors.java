package org.lakecdc.io.mssqlcdc.client;

import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which database errors the T-SQL client retries on a new connection (docs/sql-server.md
 * "Connection settings"): by SQL Server error number and SQLSTATE, as mssql-jdbc reports them
 * ({@link SQLException#getErrorCode()}, {@link SQLException#getSQLState()}), never by message text.
 *
 * <p>Transient:
 *
 * <ul>
 *   <li>SQLSTATE class {@code 08} (connection broken, refused or not opened: mssql-jdbc reports a
 *       dropped connection as {@code 08S01}), {@code 40001} (serialization failure: the deadlock
 *       victim), {@code HYT00}/{@code HYT01} (login and connection timeouts);
 *   <li>the error numbers of {@link #TRANSIENT_ERRORS}: the deadlock victim 1205 and the transient
 *       errors of Azure SQL Database and Managed Instance (Microsoft docs "Troubleshoot transient
 *       connection errors in SQL Database and SQL Managed Instance", "Transient fault error
 *       codes").
 * </ul>
 *
 * <p>Never transient: the project's decisions ({@link DataLossError}, {@link SchemaChangedError},
 * {@link CaptureInstanceNotFoundError}, {@link ChangeTablePermissionError}, any other {@link
 * CdcException} that does not wrap a transient database error), invalid values ({@link
 * IllegalArgumentException}), login failures (18456), missing permissions (229, 230, 262, 297), the
 * lock timeout the user asked for (1222) and every other error.
 */
final class TransientErrors {
  /** Error 1205: "Transaction was deadlocked ... and has been chosen as the deadlock victim". */
  public static final int DEADLOCK_VICTIM = 1205;

  /** The SQL Server error numbers retried, with what they mean. */
  public static final Map<Integer, String> TRANSIENT_ERRORS = transientErrors();

  private TransientErrors() {}

  private static Map<Integer, String> transientErrors() {
    Map<Integer, String> m = new TreeMap<>();
    m.put(DEADLOCK_VICTIM, "chosen as the deadlock victim; rerun the transaction");
    m.put(4060, "cannot open the database requested by the login (Azure SQL reconfiguration)");
    m.put(4221, "login to a read-secondary failed: the replica is not ready yet");
    m.put(10053, "transport-level error: the connection was aborted");
    m.put(10054, "transport-level error: the connection was reset by the remote host");
    m.put(10060, "transport-level error: the connection attempt timed out");
    m.put(10928, "resource ID limit reached (Azure SQL); retry later");
    m.put(10929, "resource ID minimum guarantee not met (Azure SQL); retry later");
    m.put(40143, "the service has encountered an error processing your request (Azure SQL)");
    m.put(40197, "the service has encountered an error processing your request (failover)");
    m.put(40501, "the service is currently busy (Azure SQL)");
    m.put(40613, "the database is not currently available (Azure SQL)");
    m.put(49918, "cannot process request: not enough resources (Azure SQL)");
    m.put(49919, "cannot process create or update request: too many operations (Azure SQL)");
    m.put(49920, "cannot process request: too many operations (Azure SQL)");
    m.put(233, "no process is on the other end of the pipe: the connection was closed");
    m.put(64, "the specified network name is no longer available");
    return java.util.Collections.unmodifiableMap(m);
  }

  /**
   * Whether an error is worth running again on a new connection.
   *
   * @param error what a client call threw
   * @return true for a transient database error (the first {@link SQLException} in the cause chain
   *     decides); false for the project's decisions, invalid values and everything else
   */
  public static boolean isTransient(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof DataLossError
          || t instanceof SchemaChangedError
          || t instanceof CaptureInstanceNotFoundError
          || t instanceof ChangeTablePermissionError
          || t instanceof IllegalArgumentException) {
        return false;
      }
      if (t instanceof SQLException) {
        return isTransient((SQLException) t);
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /**
   * Whether a database error is transient, by SQLSTATE and error number.
   *
   * @param error the driver's exception
   * @return true for SQLSTATE {@code 08xxx}, {@code 40001}, {@code HYT00}, {@code HYT01} or an
   *     error number of {@link #TRANSIENT_ERRORS}
   */
  public static boolean isTransient(SQLException error) {
    String state = error.getSQLState();
    if (state != null
        && (state.startsWith("08")
            || state.equals("40001")
            || state.equals("HYT00")
            || state.equals("HYT01"))) {
      return true;
    }
    return TRANSIENT_ERRORS.containsKey(error.getErrorCode());
  }
}
