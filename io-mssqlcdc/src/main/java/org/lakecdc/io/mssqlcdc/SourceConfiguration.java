package org.lakecdc.io.mssqlcdc;

import static org.apache.beam.sdk.util.Preconditions.checkArgumentNotNull;

import com.google.auto.value.AutoValue;
import java.io.Serializable;
import java.util.Locale;
import javax.sql.DataSource;
import org.apache.beam.sdk.io.jdbc.JdbcIO;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.transforms.display.HasDisplayData;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;

/**
 * The source every read mode of {@link MssqlCdcIO} takes, as every JdbcIO transform takes one
 * {@code DataSourceConfiguration}: the capture instance, how to reach SQL Server, the captured
 * columns to read and whether {@code _command_id} is in the schema. Serializable; each {@code
 * withX} returns a copy. Its display data shows the connection's non-secret settings ({@code
 * jdbcUrl}, {@code username}), never a password.
 */
@AutoValue
public abstract class SourceConfiguration implements Serializable, HasDisplayData {
  private static final long serialVersionUID = 1L;

  /** The capture instance read (SQL Server's default name is {@code <schema>_<table>}). */
  public abstract String getCaptureInstance();

  /** How a client reaches SQL Server, or null until a {@code with...} form sets it. */
  public abstract @Nullable CdcClientFactory getClientFactory();

  /** The declared columns ({@link #withColumns}), or null when they are inferred. */
  public abstract @Nullable String getColumns();

  /** Whether the schema has {@code _command_id} (default true). */
  public abstract boolean getIncludeCommandId();

  abstract Builder toBuilder();

  @AutoValue.Builder
  abstract static class Builder {
    abstract Builder setCaptureInstance(String captureInstance);

    abstract Builder setClientFactory(CdcClientFactory clientFactory);

    abstract Builder setColumns(String columns);

    abstract Builder setIncludeCommandId(boolean includeCommandId);

    abstract SourceConfiguration build();
  }

  /**
   * The source of {@code captureInstance}, columns inferred, {@code _command_id} read. Throws
   * {@link IllegalArgumentException} for a null or blank name.
   */
  public static SourceConfiguration create(String captureInstance) {
    return new AutoValue_SourceConfiguration.Builder()
        .setCaptureInstance(checkCaptureInstance(captureInstance))
        .setIncludeCommandId(true)
        .build();
  }

  private static String checkCaptureInstance(@Nullable String captureInstance) {
    require(
        captureInstance != null && !captureInstance.isBlank(),
        "captureInstance must name a capture instance, not '%s'",
        captureInstance);
    return captureInstance;
  }

  /**
   * Another capture instance of the same source (connection, columns, {@code _command_id}).
   *
   * @throws IllegalArgumentException for a null or blank name
   */
  public SourceConfiguration withCaptureInstance(String captureInstance) {
    return toBuilder().setCaptureInstance(checkCaptureInstance(captureInstance)).build();
  }

  /**
   * Reaches SQL Server through Beam's JDBC configuration, pooled on each worker ({@link
   * SqlCdcClientFactory#of(JdbcIO.DataSourceConfiguration)}); give the password as a {@link
   * org.lakecdc.io.mssqlcdc.client.PasswordSource}, read on the worker.
   */
  public SourceConfiguration withDataSourceConfiguration(
      JdbcIO.DataSourceConfiguration configuration) {
    checkArgumentNotNull(configuration, "withDataSourceConfiguration() needs one, not null");
    return withClientFactory(SqlCdcClientFactory.of(configuration));
  }

  /**
   * Reaches SQL Server through the pooled {@code DataSource} {@code provider} returns on each
   * worker (JdbcIO's {@code withDataSourceProviderFn}); it must not hold a password.
   */
  public SourceConfiguration withDataSourceProviderFn(
      SerializableFunction<Void, DataSource> provider) {
    checkArgumentNotNull(provider, "withDataSourceProviderFn() needs a provider, not null");
    return withClientFactory(SqlCdcClientFactory.of(provider));
  }

  /** Reaches the source through any client factory: a configured one, the simulator's, a test's. */
  public SourceConfiguration withClientFactory(CdcClientFactory clientFactory) {
    checkArgumentNotNull(clientFactory, "withClientFactory() needs a factory, not null");
    return toBuilder().setClientFactory(clientFactory).build();
  }

  /**
   * Declares the captured columns to read and their output types, a Spark-style DDL list ({@code
   * "order_id INT, amount DECIMAL(18,2)"}) whose types values are cast to.
   */
  public SourceConfiguration withColumns(String columns) {
    checkArgumentNotNull(columns, "withColumns() needs a column list, not null");
    return toBuilder().setColumns(columns).build();
  }

  /**
   * Whether {@code __$command_id} is read into {@code _command_id} (default true; NULL on snapshot
   * rows); false for SQL Server 2016 before the cumulative update that added it.
   */
  public SourceConfiguration withIncludeCommandId(boolean includeCommandId) {
    return toBuilder().setIncludeCommandId(includeCommandId).build();
  }

  @Override
  public void populateDisplayData(DisplayData.Builder builder) {
    builder
        .add(DisplayData.item("captureInstance", getCaptureInstance()))
        .add(DisplayData.item("includeCommandId", getIncludeCommandId()))
        .addIfNotNull(DisplayData.item("columns", getColumns()));
    if (getClientFactory() instanceof HasDisplayData factory) {
      builder.include("clientFactory", factory);
    }
  }

  static void display(@Nullable SourceConfiguration source, DisplayData.Builder builder) {
    if (source != null) {
      source.populateDisplayData(builder);
    }
  }

  static SourceConfiguration required(
      String transform, @Nullable SourceConfiguration configuration) {
    require(
        configuration != null,
        "MssqlCdcIO.%s needs a source: withSourceConfiguration() is required",
        transform);
    require(
        configuration.getClientFactory() != null,
        "MssqlCdcIO.%s needs a way to reach SQL Server: withClientFactory() is required (or"
            + " withDataSourceConfiguration(), withDataSourceProviderFn() on its"
            + " SourceConfiguration)",
        transform);
    return configuration;
  }

  SourceSpec resolve() {
    return SourceSpec.resolve(
        getCaptureInstance(), getClientFactory(), getColumns(), getIncludeCommandId());
  }

  private static void require(boolean ok, String message, Object... args) {
    if (!ok) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, message, args));
    }
  }
}
