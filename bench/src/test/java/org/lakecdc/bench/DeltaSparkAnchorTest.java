package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import io.trino.tpch.Order;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delta-spark anchor's JVM (bench-spark) appends the parquet-java anchor's file: the code path
 * of {@code deltaspark_rows_per_s}, which the smoke test skips to stay short.
 */
class DeltaSparkAnchorTest {
  @TempDir Path dir;

  @Test
  void appendsEveryRowOfTheFileOncePerRepeat() throws Exception {
    List<Order> orders = new ArrayList<>();
    for (Iterator<Order> it = Orders.first(300); it.hasNext(); ) {
      orders.add(it.next());
    }
    Path file = dir.resolve("orders.parquet");
    ParquetAnchor.write(orders, 100, file);
    Path benchDir = Path.of(System.getProperty("lakecdc.bench.dir"));

    List<Double> seconds = DeltaSparkAnchor.append(benchDir, file, 300, dir.resolve("run"), 2);

    assertThat(seconds.size(), is(2));
    assertThat(new BronzeTable(dir.resolve("run/table-1")).rows(), is(300L));
    assertThat(new BronzeTable(dir.resolve("run/table-2")).rows(), is(300L));
  }
}
