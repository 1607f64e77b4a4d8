package org.lakecdc.deltaspark;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One local Spark session with Delta for every test class of the run: a class declaring
 * {@code @ExtendWith(SharedSpark.class)} gets it as a {@link Holder} parameter of its {@code
 * BeforeAll} method and calls {@link #session()} when it needs it (so a class can start its writer
 * first). The session is created once, on first use, and stopped when the whole run ends.
 */
final class SharedSpark implements ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(SharedSpark.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == Holder.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(Holder.class, k -> new Holder(), Holder.class);
  }

  /** The run's session, created on the first {@link #session()}. */
  static final class Holder implements ExtensionContext.Store.CloseableResource {
    private SparkSession session;

    /** The session: {@code local[1]}, UTC, Java 8 time types, the Delta extension and catalog. */
    synchronized SparkSession session() {
      if (session == null) {
        session =
            SparkSession.builder()
                .master("local[1]")
                .appName("delta-spark-check")
                .config("spark.ui.enabled", "false")
                .config(
                    "spark.sql.warehouse.dir",
                    Path.of("target", "spark-warehouse").toAbsolutePath().toString())
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "1")
                // Tiny tables, one short run: rebuild a Delta snapshot in one task (not 50),
                // evaluate plans without compiling code for each query, and plan once.
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.sql.codegen.wholeStage", "false")
                // Nor code for each projection and predicate: Spark's interpreted forms of them
                // (compiling that code with Janino cost more than it saved on tables this small).
                .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.datetime.java8API.enabled", "true")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config(
                    "spark.sql.catalog.spark_catalog",
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .getOrCreate();
      }
      return session;
    }

    @Override
    public synchronized void close() {
      if (session != null) {
        session.stop();
      }
    }
  }
}
