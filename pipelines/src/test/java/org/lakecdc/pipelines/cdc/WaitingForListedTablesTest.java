package org.lakecdc.pipelines.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * The waiting notice of a continuous run of many tables names the tables the run follows at each
 * check: a table added to its listing while it runs is named once it joined, a table removed is no
 * longer named.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class WaitingForListedTablesTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");
  private static final List<String> TABLES = List.of("dbo.orders", "dbo.customers", "dbo.items");

  @TempDir Path dir;

  /** Three tables, one row each, in three transactions a minute apart. */
  private FakeSqlServer source() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    for (String table : TABLES) {
      db.createTable(
          table,
          List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("v", "varchar(20)")),
          List.of("id"));
      db.enableCdc(table);
    }
    for (int i = 0; i < TABLES.size(); i++) {
      db.transaction(T0.plusSeconds(60L * i))
          .insert(TABLES.get(i), Map.of("id", i + 1, "v", "row " + (i + 1)))
          .commit();
    }
    return db;
  }

  private JobConfig config(FakeSqlServer db, String table) {
    String ci = table.replace('.', '_');
    String delta = dir.resolve("delta").toString();
    return JobConfig.builder(
            db.clientFactory(), ci, delta + "/bronze_" + ci, delta + "/facts", delta + "/control")
        .appId(ci + "-v1")
        .bootstrap(false)
        .build();
  }

  /** A listing of the tables in {@code listed}, read again at each poll. */
  private static TableListing listing(List<JobConfig> listed) {
    return new TableListing() {
      @Override
      public String name() {
        return "--tablesFile tables.options";
      }

      @Override
      public List<Listed> read() {
        List<Listed> out = new ArrayList<>();
        for (int i = 0; i < listed.size(); i++) {
          JobConfig c = listed.get(i);
          out.add(
              new Listed(
                  c.captureInstance(),
                  "--tablesFile tables.options line " + (i + 1),
                  List.of(),
                  c,
                  null));
        }
        return out;
      }
    };
  }

  @Test
  void theLineNamesTheTablesFollowedNowNotTheStartingOnes() {
    FakeSqlServer db = source();
    JobConfig orders = config(db, "dbo.orders");
    JobConfig customers = config(db, "dbo.customers");
    JobConfig items = config(db, "dbo.items");
    // Every table has a position: one batch each.
    CdcToDeltaJob.runAll(
        List.of(orders, customers, items),
        PipelineOptionsFactory.fromArgs("--runner=DirectRunner").create(),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        () -> {});

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    List<JobConfig> listed = new ArrayList<>(List.of(orders, customers));
    TableListing listing = listing(listed);
    List<JobConfig> started = List.copyOf(listed);
    ContinuousMode.WaitingNotice notice =
        new ContinuousMode.WaitingNotice(
            Duration.ofSeconds(5), ContinuousMode.waitingFor(started, listing), out);
    ListingWatch watch = new ListingWatch(listing, started, out);
    try {
      notice.check();
      notice.check();
      listed.set(1, items);
      watch.poll();
      notice.check(); // the tables changed: no line
      notice.check();
    } finally {
      watch.forget();
    }
    String waiting =
        "Waiting for changes to 2 tables: no batch committed in the last minute; position %s;"
            + " polling every 5 s";
    assertEquals(
        List.of(
            String.format(
                waiting,
                "dbo_orders 0x0000002A000001000021 (batch 0),"
                    + " dbo_customers 0x0000002A000001000021 (batch 0)"),
            "Added dbo_items (--tablesFile tables.options line 2): planning it, then following it"
                + " beside the running tables",
            "Removed dbo_customers from --tablesFile tables.options: its read stops after the"
                + " batch it is reading; its position is kept for a later run",
            String.format(
                waiting,
                "dbo_orders 0x0000002A000001000021 (batch 0),"
                    + " dbo_items 0x0000002A000001000021 (batch 0)")),
        bytes.toString(StandardCharsets.UTF_8).lines().toList());
  }
}
