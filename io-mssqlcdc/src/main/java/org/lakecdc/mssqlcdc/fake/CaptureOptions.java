package org.lakecdc.mssqlcdc.fake;

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
   */
  public static CaptureOptions defaults() {
    return new CaptureOptions(null, null, null);
  }

  /** {@code @capture_instance}: the instance name (its change table is {@code cdc.<name>_CT}). */
  public CaptureOptions withName(String captureInstance) {
    return new CaptureOptions(
        Objects.requireNonNull(captureInstance, "captureInstance"), capturedColumns, createTime);
  }

  /**
   * {@code @captured_column_list}: the columns to capture, matched ignoring case; they must include
   * the key columns. The change table orders them by the source table's {@code column_id}.
   */
  public CaptureOptions withCapturedColumns(List<String> columns) {
    return new CaptureOptions(name, List.copyOf(columns), createTime);
  }

  /** Same as {@link #withCapturedColumns(List)}. */
  public CaptureOptions withCapturedColumns(String... columns) {
    return withCapturedColumns(List.of(columns));
  }

  /**
   * When the instance is created (UTC); stored as {@code create_date} on the server's clock.
   * Without it, the server's current time: the latest event the fake has written, or the system
   * clock before any.
   */
  public CaptureOptions withCreateTime(Instant utc) {
    return new CaptureOptions(name, capturedColumns, Objects.requireNonNull(utc, "utc"));
  }

  /** The instance name, or empty for the default {@code <schema>_<table>}. */
  public Optional<String> name() {
    return Optional.ofNullable(name);
  }

  /** The columns to capture, or empty for all. */
  public Optional<List<String>> capturedColumns() {
    return Optional.ofNullable(capturedColumns);
  }

  /** The creation time (UTC), or empty for the server's current time. */
  public Optional<Instant> createTime() {
    return Optional.ofNullable(createTime);
  }
}
