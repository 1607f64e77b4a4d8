package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad command lines give one line naming the option and what it accepts; nothing is written. */
class CommandLineTest {
  @TempDir Path dir;

  private static String error(String... args) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CdcToDelta.config(CommandLine.parse(args, CdcToDeltaOptions.class)));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    return e.getMessage();
  }

  @Test
  void aValueOfTheWrongTypeNamesItsOption() {
    assertEquals(
        "--maxCommitsPerBatch must be an integer in range, not 'abc'",
        error("--maxCommitsPerBatch=abc"));
    assertEquals(
        "--numPartitions must be an integer in range, not '99999999999'",
        error("--numPartitions=99999999999"));
  }

  @Test
  void outOfRangeValuesNameTheOptionAndWhatItAccepts() {
    assertEquals(
        "--maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn, not '-1'",
        error("--maxCommitsPerBatch=-1"));
    assertEquals("--numPartitions must be a positive integer, not '0'", error("--numPartitions=0"));
    assertEquals(
        "--granularity must be 'minute', 'hour' or 'day', not 'week'", error("--granularity=week"));
    assertEquals(
        "--isolationLevel must be 'readCommitted' or 'snapshot' (never NOLOCK), not"
            + " 'readUncommitted'",
        error("--isolationLevel=readUncommitted"));
    assertEquals(
        "--startingLsn must be 'earliest', 'latest' or an LSN such as 0x0000002A000001000001, not"
            + " 'soon'",
        error("--bootstrap=false", "--startingLsn=soon"));
    assertEquals(
        "--demoScale must be a TPC-H scale factor in (0, 1], not '0.0'", error("--demoScale=0"));
    assertEquals("--captureInstance must not be empty", error("--captureInstance="));
  }

  @Test
  void aFileIsNotASimulatorDirectory() throws Exception {
    Path file = Files.writeString(dir.resolve("afile"), "x");
    assertTrue(error("--fakePath=" + file).startsWith("--fakePath must be a directory"));
  }

  @Test
  void aRealServerNeedsExactlyOnePasswordSourceAndThisBuildSaysItHasNoClient() {
    assertEquals(
        "--connectionUrl must be a SQL Server JDBC URL (jdbc:sqlserver://host:1433;"
            + "databaseName=db), not 'postgres://x'",
        error("--connectionUrl=postgres://x"));
    assertEquals(
        "--connectionUrl needs the password from exactly one of --passwordEnv (an environment"
            + " variable's name) or --passwordFile (a file's path)",
        error("--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d", "--user=u"));
    assertTrue(
        error(
                "--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d",
                "--user=u",
                "--passwordEnv=LAKECDC_TEST_UNSET_VARIABLE")
            .startsWith("--passwordEnv names the environment variable"));
  }
}
