package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.IntegrationCondition;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.SqlServerCdcTestDatabase;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FileBackedCdcClient;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * {@code Simulator export} against SQL Server 2022 in a container, with the command-line options a
 * user passes ({@code --connectionUrl}, {@code --user}, {@code --passwordFile}, the least-privilege
 * reader): the export read through the simulator's client holds the server's commits, change rows
 * and table rows as the T-SQL client reads them, and an import replayed in two steps reads the
 * same. Runs in the integration profile ({@code mvn -B -Pit verify}) where a Docker engine is
 * available; otherwise it reports skipped with the reason.
 */
@ExtendWith(IntegrationCondition.class)
class SqlServerExportTest {
  private static final String CI = "dbo_sim_orders";
  private static SqlServerCdcTestDatabase server;

  @TempDir Path dir;

  @BeforeAll
  static void startSqlServer() throws Exception {
    server = SqlServerCdcTestDatabase.start();
    server.createCapturedTable(
        "sim_orders",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("status", "varchar(20)"),
            ColumnDefinition.of("amount", "decimal(18,2)"),
            ColumnDefinition.of("placed_at", "datetime2(3)")),
        List.of("id"));
    server.transaction(
        "INSERT INTO dbo.sim_orders VALUES (1, 'new', 10.50, '2026-09-28T13:50:00.123')",
        "INSERT INTO dbo.sim_orders VALUES (2, 'new', 20.00, NULL)");
    server.transaction("UPDATE dbo.sim_orders SET status = 'paid' WHERE id = 1");
    server.transaction("INSERT INTO dbo.sim_orders VALUES (3, 'new', 3.25, NULL)");
    server.transaction("DELETE FROM dbo.sim_orders WHERE id = 2");
  }

  @AfterAll
  static void stopSqlServer() {
    if (server != null) {
      server.stop();
    }
  }

  private static StatusTest.Output simulator(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Simulator.run(args, o, e, Clock.systemUTC());
    }
    return new StatusTest.Output(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static List<Commit> commits(CdcClient client, Lsn from, Lsn to) {
    List<Commit> out = new ArrayList<>();
    for (Optional<Commit> c = client.nthCommitAfter(client.decrementLsn(from), 1);
        c.isPresent() && !c.get().lsn().isAfter(to);
        c = client.nthCommitAfter(c.get().lsn(), 1)) {
      out.add(c.get());
    }
    return out;
  }

  private static List<ChangeRow> rows(CdcClient client, Lsn from, Lsn to) {
    List<ChangeRow> out = new ArrayList<>();
    try (CloseableIterator<ChangeRow> it =
        client.readChanges(
            new ChangeQuery(CI, from, to, List.of("id", "status", "amount", "placed_at"), true))) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  private static List<List<Object>> table(CdcClient client) {
    List<List<Object>> out = new ArrayList<>();
    try (CloseableIterator<List<Object>> it =
        client.readTable(
            new TableQuery(
                "dbo",
                "sim_orders",
                List.of("id", "status", "amount", "placed_at"),
                List.of("id"),
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED))) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  @Test
  void anExportOfSqlServerReadsAsTheServerAndReplaysInSteps() {
    Path export = dir.resolve("export");
    StatusTest.Output run =
        simulator(
            "export",
            "--connectionUrl=" + server.jdbcUrl() + ";trustServerCertificate=true",
            "--user=" + SqlServerCdcTestDatabase.READER,
            "--passwordFile=" + server.passwordFile(),
            "--tables=" + CI,
            "--exportPath=" + export);
    assertEquals(0, run.code(), run.err());
    assertTrue(
        run.out().startsWith("exported 1 capture instance (" + CI + ") of dbo.sim_orders from "),
        run.out());
    assertTrue(run.out().strip().endsWith(", 0 DDL rows, 2 table rows"), run.out());

    Lsn min;
    Lsn max;
    List<Commit> commits;
    try (CdcClient sql = server.clientFactory().open();
        CdcClient fake = new FileBackedCdcClient(export)) {
      min = sql.minLsn(CI);
      max = sql.maxLsn().orElseThrow();
      commits = commits(sql, min, max);
      assertEquals(commits, commits(fake, Lsn.ZERO, Lsn.MAX));
      assertEquals(min, fake.minLsn(CI));
      assertEquals(sql.capturedColumns(CI), fake.capturedColumns(CI));
      // 2 inserts, the update's two images, an insert, a delete.
      assertEquals(6, rows(sql, min, max).size());
      assertEquals(rows(sql, min, max), rows(fake, Lsn.ZERO, Lsn.MAX));
      assertEquals(table(sql), table(fake));
    }

    Path copy = dir.resolve("copy");
    StatusTest.Output first =
        simulator("import", "--exportPath=" + export, "--commits=2", "--fakePath=" + copy);
    assertEquals(0, first.code(), first.err());
    try (CdcClient fake = new FileBackedCdcClient(copy)) {
      assertEquals(Optional.of(commits.get(1).lsn()), fake.maxLsn());
    }
    StatusTest.Output rest = simulator("replay", "--exportPath=" + export, "--fakePath=" + copy);
    assertEquals(0, rest.code(), rest.err());
    try (CdcClient sql = server.clientFactory().open();
        CdcClient fake = new FileBackedCdcClient(copy)) {
      assertEquals(commits, commits(fake, Lsn.ZERO, Lsn.MAX));
      assertEquals(rows(sql, min, max), rows(fake, Lsn.ZERO, Lsn.MAX));
    }
  }
}
