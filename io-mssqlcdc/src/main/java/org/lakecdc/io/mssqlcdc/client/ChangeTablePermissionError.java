package org.lakecdc.io.mssqlcdc.client;

/**
 * The login may not read a capture instance's change table: the T-SQL client reads {@code
 * cdc.[<ci>_CT]} directly, which needs {@code SELECT} on it, one grant per capture instance (a
 * newer instance needs its own before the stream reaches it). Raised when a change-table read fails
 * and {@code HAS_PERMS_BY_NAME('cdc.[<ci>_CT]', 'OBJECT', 'SELECT')} is 0 (docs/sql-server.md "The
 * reading login"; docs/scenarios.md C229); the message holds the exact statement a DBA runs, {@code
 * GRANT SELECT ON cdc.[<ci>_CT] TO [<user>]}. Never retried.
 */
public class ChangeTablePermissionError extends CdcException {
  private static final long serialVersionUID = 1L;

  private final String captureInstance;
  private final String grant;

  /**
   * The error for one change table.
   *
   * @param captureInstance the capture instance whose change table was refused
   * @param user the database user ({@code USER_NAME()}) the grant is for
   * @param cause the driver's error
   */
  public ChangeTablePermissionError(String captureInstance, String user, Throwable cause) {
    super(message(captureInstance, user), cause);
    this.captureInstance = captureInstance;
    this.grant = grant(captureInstance, user);
  }

  /**
   * The GRANT that fixes the error.
   *
   * @param captureInstance the capture instance
   * @param user the database user
   * @return {@code GRANT SELECT ON cdc.[<ci>_CT] TO [<user>]}
   */
  public static String grant(String captureInstance, String user) {
    return "GRANT SELECT ON "
        + SqlIdentifiers.changeTable(captureInstance)
        + " TO "
        + SqlIdentifiers.quoteUser(user);
  }

  private static String message(String captureInstance, String user) {
    return "The login may not read the change table "
        + SqlIdentifiers.changeTable(captureInstance)
        + " of capture instance '"
        + captureInstance
        + "'. A DBA grants it with: "
        + grant(captureInstance, user)
        + " (each capture instance's change table needs its own grant; see"
        + " sql/04_least_privilege_login.sql)";
  }

  /**
   * The capture instance.
   *
   * @return its name
   */
  public String captureInstance() {
    return captureInstance;
  }

  /**
   * The statement that grants the missing permission.
   *
   * @return {@code GRANT SELECT ON cdc.[<ci>_CT] TO [<user>]}
   */
  public String grant() {
    return grant;
  }
}
