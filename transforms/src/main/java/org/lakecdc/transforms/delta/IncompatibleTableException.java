package org.lakecdc.transforms.delta;

/**
 * A Delta table exists but this build cannot use it as asked: it is of another {@link TableKind},
 * at a schema version newer than this build knows, has a column of a type the rows do not fit, or a
 * property value it cannot read. The message names the table path and what differs. Nothing was
 * written to the table.
 */
public class IncompatibleTableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with a message.
   *
   * @param message what is incompatible, naming the table
   */
  public IncompatibleTableException(String message) {
    super(message);
  }
}
