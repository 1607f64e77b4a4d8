package org.lakecdc.io.mssqlcdc.schema;

/**
 * The declared columns (option {@code columns}) do not fit what the table's capture instances
 * capture: a declared column no instance captures, or a declared type that cannot hold a captured
 * column's SQL Server type ({@link TypeCompatibility#holds}). Raised when the read's schema is
 * resolved, before any row is read, so a job can refuse the option before it writes anything.
 */
public class DeclaredColumnsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message one line naming the columns, the instances and what to declare instead
   */
  public DeclaredColumnsException(String message) {
    super(message);
  }
}
