package org.lakecdc.io.mssqlcdc.fake;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Options of {@link FakeSqlServer#enableCdc(String, CaptureOptions)}, the parameters of {@code
 * sys.sp_cdc_enable_table} the fake models. Immutable; each {@code withX} returns a copy.
 */
public final class CaptureOptions {
  private final String name;
  private final List<String> capturedColumns;
  private final Instant createTime;

  private CaptureOptions(String name, List<String> capturedColumns, Instant createTime) {
    this.name = name;
    this.capturedColumns = capturedColumns;
    this.createTime = createTime;
  }

  /**
   * The defaults: capture instance {@code <schema>_<table>}, every column captured, created at the
   * server's current time.
   *
   * @return the default options
   */
  public static CaptureOptions defaults() {
    return new CaptureOptions(null, null, null);
  }

  /**
   * {@code @capture_instance}: the instance name (its change table is {@code cdc.<name>_CT}).
   *
   * @param captureInstance the name, at most 100 characters, unique in the database ignoring case
   * @return a copy with the name
   */
  public CaptureOptions withName(String captureInstance) {
    return new CaptureOptions(
        Objects.requireNonNull(captureInstance, "captureInstance"), capturedColumns, createTime);
  }

  /**
   * {@code @captured_column_list}: the columns to capture.
   *
   * @param columns source column names, matched ignoring case; they must include the key columns.
   *     The change table orders them by the source table's {@code column_id}, not by this list
   * @return a copy with the column list
   */
  public CaptureOptions withCapturedColumns(List<String> columns) {
    return new CaptureOptions(name, List.copyOf(columns), createTime);
  }

  /**
   * Same as {@link #withCapturedColumns(List)}.
   *
   * @param columns source column names
   * @return a copy with the column list
   */
  public CaptureOptions withCapturedColumns(String... columns) {
    return withCapturedColumns(List.of(columns));
  }

  /**
   * When the instance is created; stored as {@code create_date} on the server's clock. Without it,
   * the server's current time: the latest event the fake has written, or the system clock before
   * any (and never before the table's older instance).
   *
   * @param utc the creation time, UTC
   * @return a copy with the creation time
   */
  public CaptureOptions withCreateTime(Instant utc) {
    return new CaptureOptions(name, capturedColumns, Objects.requireNonNull(utc, "utc"));
  }

  /**
   * The instance name.
   *
   * @return the name, or empty for the default {@code <schema>_<table>}
   */
  public Optional<String> name() {
    return Optional.ofNullable(name);
  }

  /**
   * The columns to capture.
   *
   * @return the column names as given, or empty for all columns
   */
  public Optional<List<String>> capturedColumns() {
    return Optional.ofNullable(capturedColumns);
  }

  /**
   * The creation time.
   *
   * @return the creation time (UTC), or empty for the server's current time
   */
  public Optional<Instant> createTime() {
    return Optional.ofNullable(createTime);
  }
}
