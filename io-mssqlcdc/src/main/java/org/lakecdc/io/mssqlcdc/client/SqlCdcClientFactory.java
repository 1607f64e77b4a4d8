package org.lakecdc.io.mssqlcdc.client;

import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.transforms.display.HasDisplayData;

/**
 * Opens {@link SqlCdcClient}s over one SQL Server database. Serializable: a pipeline ships it
 * (never a live connection) to workers, and each read opens and closes its own client (invariant
 * 5). It holds a {@link ConnectionConfig}, never the password, which each client reads from its
 * environment variable or file when it connects; {@link #toString()} and the Beam display data
 * ({@code sqlserver.url}, {@code sqlserver.user}, {@code sqlserver.password} = where it is read,
 * ...) show no secret.
 */
public final class SqlCdcClientFactory implements CdcClientFactory, HasDisplayData {
  private static final long serialVersionUID = 1L;

  private final ConnectionConfig config;

  private SqlCdcClientFactory(ConnectionConfig config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  /**
   * A factory for the configured server.
   *
   * @param config the connection settings
   * @return the factory
   */
  public static SqlCdcClientFactory of(ConnectionConfig config) {
    return new SqlCdcClientFactory(config);
  }

  /**
   * The connection settings.
   *
   * @return the configuration
   */
  public ConnectionConfig config() {
    return config;
  }

  /**
   * Opens a client; it connects at its first call. The caller closes it.
   *
   * @return a new client
   */
  @Override
  public CdcClient open() {
    return new SqlCdcClient(config);
  }

  /** Every setting of {@link ConnectionConfig#describe()} as {@code sqlserver.<name>}. */
  @Override
  public void populateDisplayData(DisplayData.Builder builder) {
    for (Map.Entry<String, String> e : config.describe().entrySet()) {
      builder.add(DisplayData.item("sqlserver." + e.getKey(), e.getValue()));
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SqlCdcClientFactory && config.equals(((SqlCdcClientFactory) o).config);
  }

  @Override
  public int hashCode() {
    return config.hashCode();
  }

  @Override
  public String toString() {
    return "SqlCdcClientFactory" + config.describe();
  }
}
