package org.lakecdc.io.mssqlcdc.client;

/**
 * The captured schema changed in a way the running read cannot follow (a captured type that no
 * longer fits the output type, a newer capture instance with new columns, two instances typing one
 * column incompatibly). Raised before any row of the affected range is read; never retried.
 * docs/options.md, docs/sql-server.md "Switching to a new capture instance".
 */
public class SchemaChangedError extends CdcException {
  private static final long serialVersionUID = 1L;

  public SchemaChangedError(String message) {
    super(message);
  }
}
