package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import io.trino.tpch.Order;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parquet-java anchor writes the benchmark's rows as bronze holds them. */
class ParquetAnchorTest {
  @TempDir Path dir;

  @Test
  void writesEveryOrderWithItsTransactionsChangeColumns() throws Exception {
    List<Order> orders = new ArrayList<>();
    for (Iterator<Order> it = Orders.first(2_500); it.hasNext(); ) {
      orders.add(it.next());
    }
    Path file = dir.resolve("orders.parquet");
    ParquetAnchor.write(orders, 1_000, file);

    List<Group> rows = new ArrayList<>();
    try (ParquetReader<Group> reader =
        new ParquetReader.Builder<Group>(new LocalInputFile(file)) {
          @Override
          protected org.apache.parquet.hadoop.api.ReadSupport<Group> getReadSupport() {
            return new GroupReadSupport();
          }
        }.build()) {
      for (Group g = reader.read(); g != null; g = reader.read()) {
        rows.add(g);
      }
    }
    assertThat(rows.size(), is(2_500));
    Group first = rows.get(0);
    assertThat(first.getString("_start_lsn", 0), is("0x0000002A000001000001"));
    assertThat(first.getString("_seqval", 0), is("0x0000002A000001000002"));
    assertThat(first.getInteger("_operation", 0), is(2));
    assertThat(first.getInteger("_command_id", 0), is(1));
    assertThat(first.getLong("_commit_ts", 0), is(1_767_225_600_000_000L));
    assertThat(first.getInteger("o_orderkey", 0), is(1));
    assertThat(first.getLong("o_totalprice", 0), is(orders.get(0).getTotalPriceInCents()));
    assertThat(first.getString("o_comment", 0), is(orders.get(0).getComment()));
    // Row 1,001 opens the second transaction: the next LSN, one second later.
    Group second = rows.get(1_000);
    assertThat(second.getString("_start_lsn", 0), is("0x0000002A000001000011"));
    assertThat(second.getInteger("_command_id", 0), is(1));
    assertThat(second.getLong("_commit_ts", 0), is(1_767_225_601_000_000L));
    Group last = rows.get(2_499);
    assertThat(last.getInteger("o_orderkey", 0), is((int) orders.get(2_499).getOrderKey()));
    assertThat(last.getInteger("_command_id", 0), is(500));
  }
}
