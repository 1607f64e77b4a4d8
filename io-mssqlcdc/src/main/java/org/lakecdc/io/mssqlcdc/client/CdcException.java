package org.lakecdc.io.mssqlcdc.client;

/** Base of the typed errors this project raises about SQL Server CDC state. Unchecked. */
public class CdcException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CdcException(String message) {
    super(message);
  }

  public CdcException(String message, Throwable cause) {
    super(message, cause);
  }
}
