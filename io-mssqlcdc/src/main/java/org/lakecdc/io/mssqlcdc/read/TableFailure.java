package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.ChangeTablePermissionError;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;

/**
 * Why one table's read stopped while the other tables of the same pipeline go on: the errors that
 * belong to one capture instance rather than to the source or the runner. Recognised by type, never
 * by message text: {@link DataLossError} (CDC cleanup purged changes not yet read), {@link
 * SchemaChangedError} (DDL or a capture instance the read cannot follow), {@link
 * ChangeTablePermissionError} (a missing {@code SELECT} grant on the change table) and {@link
 * CaptureInstanceNotFoundError} (the capture instance was disabled). Anything else (a lost
 * connection, a full disk, a bug) fails the pipeline as before.
 *
 * @param errorClass the simple name of the error's class, e.g. {@code DataLossError}
 * @param message the error's message, its first line
 */
public record TableFailure(String errorClass, String message) implements Serializable {
  public TableFailure {
    Objects.requireNonNull(errorClass, "errorClass");
    Objects.requireNonNull(message, "message");
  }

  /**
   * The failure {@code error} stands for when it, or one of its causes, is of a type that stops one
   * table only; empty otherwise.
   *
   * @param error what a read threw
   */
  public static Optional<TableFailure> of(Throwable error) {
    Throwable e = error;
    for (int depth = 0; e != null && depth < 8; depth++, e = e.getCause()) {
      if (e instanceof DataLossError
          || e instanceof SchemaChangedError
          || e instanceof ChangeTablePermissionError
          || e instanceof CaptureInstanceNotFoundError) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        return Optional.of(
            new TableFailure(
                e.getClass().getSimpleName(), message.lines().findFirst().orElse(message)));
      }
    }
    return Optional.empty();
  }

  /** {@code DataLossError: <message>}: how facts rows and summaries show it. */
  @Override
  public String toString() {
    return errorClass + ": " + message;
  }
}
