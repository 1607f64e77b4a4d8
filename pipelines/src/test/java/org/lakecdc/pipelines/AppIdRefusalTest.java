package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cli.ConsoleLogging;

/**
 * A new target under the default app id, which another live target already uses in the facts table,
 * is refused on the command line like any refused option: one line, exit code 2, and nothing left
 * behind (no target directory, no log file; docs/tables.md "Whose position is it").
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class AppIdRefusalTest {
  @TempDir Path dir;

  @Test
  void aReusedAppIdIsRefusedWithExitCode2BeforeTheLogFileOrAnyTableIsWritten() throws Exception {
    JobFixture f = JobFixture.history(dir);
    f.run();
    long factsVersion = f.tables.version(f.facts);
    long controlVersion = f.tables.version(f.control);
    Lsn max = f.db.openClient().maxLsn().orElseThrow();
    Path target = dir.resolve("reused/dbo_orders");
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    URI jobs = AppIdRefusalTest.class.getClassLoader().getResource("log4j2.xml").toURI();
    PrintStream console = System.out;
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int code;
    try (PrintStream captured = new PrintStream(new ByteArrayOutputStream(), true);
        PrintStream err = new PrintStream(errors, true, StandardCharsets.UTF_8)) {
      System.setOut(captured);
      context.setConfigLocation(jobs);
      code =
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=dbo_orders",
                "--target=" + target,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control
              },
              err,
              UnaryOperator.identity());
    } finally {
      System.setOut(console);
      context.setConfigLocation(tests);
      System.clearProperty(ConsoleLogging.LOG_FILE);
    }

    assertEquals(2, code, errors.toString(StandardCharsets.UTF_8));
    assertEquals(
        "error: App id 'dbo_orders' is already used for target "
            + f.bronze
            + " in the facts table "
            + f.facts
            + " (batch 2, end LSN "
            + max
            + "): target "
            + target
            + " needs an app id of its own; run with --appId=dbo_orders_2 (an app id no other"
            + " target uses)\n",
        errors.toString(StandardCharsets.UTF_8));
    assertFalse(Files.exists(dir.resolve("reused")), "no target directory, no log file");
    assertEquals(factsVersion, f.tables.version(f.facts));
    assertEquals(controlVersion, f.tables.version(f.control));
  }
}
