package org.lakecdc.io.mssqlcdc.client;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.options.ValueProvider;

/**
 * Where a worker reads the SQL Server login's password: an environment variable or a file (its
 * first line). A {@link ValueProvider} for {@code JdbcIO.DataSourceConfiguration#withPassword}, so
 * that the password itself is never part of the pipeline: the configuration holds only this
 * reference, and each worker reads the password from its own environment or file system when it
 * builds its connection pool ({@link #get()}). It never reaches {@code toString()}, logs, exception
 * messages, facts or Beam display data; {@link #toString()} shows only the variable's name or the
 * file's path.
 *
 * <p>Immutable and serializable.
 */
public final class PasswordSource implements ValueProvider<String>, Serializable {
  private static final long serialVersionUID = 1L;

  /** What {@link #reference} names. */
  public enum Kind {
    /** An environment variable's name. */
    ENVIRONMENT_VARIABLE,
    /** A file's path; the password is its first line. */
    FILE
  }

  private final Kind kind;
  private final String reference;

  private PasswordSource(Kind kind, String reference) {
    this.kind = kind;
    this.reference = reference;
  }

  /**
   * The password is the value of an environment variable.
   *
   * @param variable the variable's name, e.g. {@code LAKECDC_PASSWORD}
   * @return the source
   * @throws IllegalArgumentException when the name is blank
   */
  public static PasswordSource environmentVariable(String variable) {
    if (variable == null || variable.isBlank()) {
      throw new IllegalArgumentException("The password's environment variable name is empty");
    }
    return new PasswordSource(Kind.ENVIRONMENT_VARIABLE, variable);
  }

  /**
   * The password is the first line of a file (a trailing line break is not part of it).
   *
   * @param path the file's path
   * @return the source
   * @throws IllegalArgumentException when the path is blank
   */
  public static PasswordSource file(String path) {
    if (path == null || path.isBlank()) {
      throw new IllegalArgumentException("The password file's path is empty");
    }
    return new PasswordSource(Kind.FILE, path);
  }

  /**
   * Whether this is a variable or a file.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * The variable's name or the file's path (never the password).
   *
   * @return the reference
   */
  public String reference() {
    return reference;
  }

  /**
   * Reads the password from the process environment or the file, now.
   *
   * @return the password
   * @throws CdcException naming the variable or the file (never the password) when the variable is
   *     not set or the file cannot be read or is empty
   */
  @Override
  public String get() {
    return read(System::getenv);
  }

  /**
   * Always true: the password is read where {@link #get()} is called (on the worker).
   *
   * @return true
   */
  @Override
  public boolean isAccessible() {
    return true;
  }

  /**
   * Reads the password, looking environment variables up with {@code environment} (the test seam).
   *
   * @param environment maps a variable's name to its value, or null when unset
   * @return the password
   * @throws CdcException when the variable is not set or the file cannot be read or is empty
   */
  String read(UnaryOperator<String> environment) {
    if (kind == Kind.ENVIRONMENT_VARIABLE) {
      String value = environment.apply(reference);
      if (value == null) {
        throw new CdcException("The password's environment variable " + reference + " is not set");
      }
      return value;
    }
    String text;
    try {
      text = Files.readString(Path.of(reference), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CdcException(
          "The password file " + reference + " cannot be read: " + FileErrors.reason(e));
    } catch (RuntimeException e) {
      throw new CdcException(
          "The password file "
              + reference
              + " cannot be read ("
              + e.getClass().getSimpleName()
              + ")");
    }
    String first = text.lines().findFirst().orElse("");
    if (first.isEmpty()) {
      throw new CdcException("The password file " + reference + " is empty");
    }
    return first;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PasswordSource
        && kind == ((PasswordSource) o).kind
        && reference.equals(((PasswordSource) o).reference);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, reference);
  }

  /**
   * Where the password comes from, never the password.
   *
   * @return {@code env:<variable>} or {@code file:<path>}
   */
  @Override
  public String toString() {
    return (kind == Kind.ENVIRONMENT_VARIABLE ? "env:" : "file:") + reference;
  }
}
