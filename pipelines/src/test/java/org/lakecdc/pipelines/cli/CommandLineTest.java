package org.lakecdc.pipelines.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.util.SerializableUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.PasswordSource;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.options.Accepts;
import org.lakecdc.pipelines.options.ApplyChangesOptions;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.options.PrintChangesOptions;
import org.lakecdc.pipelines.options.SilverOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SeedCopy;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.transforms.finalization.Granularity;

/** Bad command lines give one line naming the option and what it accepts; nothing is written. */
class CommandLineTest {
  @TempDir Path dir;

  private static String error(String... args) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CdcToDeltaLauncher.config(CommandLine.parse(args, CdcToDeltaOptions.class)));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    return e.getMessage();
  }

  private static String printChangesError(String... args) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CommandLine.parse(args, PrintChangesOptions.class));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    return e.getMessage();
  }

  @Test
  void aBooleanOfTheWrongFormNamesItsOptionAndTrueOrFalse() {
    assertEquals("--bootstrap must be true or false, not 'maybe'", error("--bootstrap=maybe"));
    assertEquals("--continuous must be true or false, not 'yes'", error("--continuous=yes"));
    assertEquals(
        "--repeatBoundedRuns must be true or false, not 'maybe'",
        error("--repeatBoundedRuns=maybe"));
    assertEquals("--verbose must be true or false, not '1'", printChangesError("--verbose=1"));
  }

  @Test
  void aNumberOfTheWrongFormNamesItsOptionAndItsRange() {
    assertEquals(
        "--maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn, not 'ten'",
        error("--maxCommitsPerBatch=ten"));
    assertEquals(
        "--maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn, not '1.5'",
        error("--maxCommitsPerBatch=1.5"));
    assertEquals(
        "--numPartitions must be a positive integer (at most 2147483647), not '99999999999'",
        error("--numPartitions=99999999999"));
    assertEquals(
        "--runForSeconds must be 0 (run until stopped) or a positive integer (at most"
            + " 9223372036854775807), not '99999999999999999999'",
        error("--runForSeconds=99999999999999999999"));
    assertEquals(
        "--lockTimeoutMs must be 0 or a positive number of milliseconds up to 2147483647, not"
            + " 'x'",
        error("--lockTimeoutMs=x"));
    assertEquals(
        "--demoScale must be a TPC-H scale factor in (0, 1], not 'abc'", error("--demoScale=abc"));
    assertEquals(
        "--connectTimeout must be 0 or a positive number of seconds, not 'never'",
        error("--connectTimeout=never"));
    assertEquals(
        "--sampleRows must be 0 or a positive integer, not 'all'",
        printChangesError("--sampleRows=all"));
    // Beam's own options, without an @Accepts, are described by their type.
    assertEquals("--targetParallelism must be an integer, not 'x'", error("--targetParallelism=x"));
  }

  @Test
  void anEmptyValueOfAnOptionThatIsNotTextNamesItsOption() {
    assertEquals(
        "--maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn, not empty",
        error("--maxCommitsPerBatch="));
    assertEquals("--bootstrap must be true or false, not empty", error("--bootstrap="));
    assertEquals(
        "--lockTimeoutMs must be 0 or a positive number of milliseconds up to 2147483647, not"
            + " empty",
        error("--lockTimeoutMs="));
    assertEquals(
        "--repeatBoundedRuns must be true or false, not empty", error("--repeatBoundedRuns="));
  }

  @Test
  void anOptionGivenMoreThanOnceNamesItsOptionAndTheValues() {
    assertEquals(
        "--maxCommitsPerBatch is given twice (5 and 6): give it once",
        error("--maxCommitsPerBatch=5", "--maxCommitsPerBatch=6"));
    assertEquals(
        "--target is given 3 times (a, b and c): give it once",
        error("--target=a", "--target=b", "--target=c"));
    assertEquals(
        "--continuous is given twice (true and true): give it once",
        error("--continuous", "--continuous"));
    assertEquals(
        "--columns is given twice (a INT, b STRING and a INT): give it once",
        error("--columns=a INT, b STRING", "--columns=a INT"));
    assertEquals(
        "--sampleRows is given twice (1 and 2): give it once",
        printChangesError("--sampleRows=1", "--sampleRows=2"));
  }

  @Test
  void theLogFileIsAFilesPath() {
    assertEquals("--logFile must be a file's path, not empty", error("--logFile="));
    assertEquals(
        "--logFile must be a file's path, not the directory '" + dir + "'",
        printChangesError("--logFile=" + dir));
  }

  @Test
  void everyNumericOptionOfEveryJobSaysWhatItAccepts() {
    for (Class<?> options :
        List.of(
            CdcToDeltaOptions.class,
            SilverOptions.class,
            ApplyChangesOptions.class,
            PrintChangesOptions.class)) {
      for (Method getter : options.getDeclaredMethods()) {
        Class<?> type = getter.getReturnType();
        if (getter.getName().startsWith("get")
            && type != String.class
            && type != boolean.class
            && type != Boolean.class) {
          assertNotNull(
              getter.getAnnotation(Accepts.class),
              options.getSimpleName() + "." + getter.getName() + " has no @Accepts");
        }
      }
    }
  }

  @Test
  void seedOptionsNameTheOptionAndTheAcceptedForms() {
    assertEquals(
        "--seedAsOf must be a UTC ISO-8601 instant such as 2026-09-28T13:52:00Z (an offset such as"
            + " -03:00 is converted to UTC) or an LSN of 0x and 20 hexadecimal digits such as"
            + " 0x0000002A000001000001, not '2026-09-28 13:52'",
        error("--seedTable=" + dir.resolve("copy"), "--seedAsOf=2026-09-28 13:52"));
    assertEquals(
        "--seedAsOf must be a UTC ISO-8601 instant such as 2026-09-28T13:52:00Z (an offset such as"
            + " -03:00 is converted to UTC) or an LSN of 0x and 20 hexadecimal digits such as"
            + " 0x0000002A000001000001, not '0xZZ'",
        error("--seedTable=" + dir.resolve("copy"), "--seedAsOf=0xZZ"));
    assertEquals(
        "--seedAsOf must be a UTC ISO-8601 instant such as 2026-09-28T13:52:00Z (an offset such as"
            + " -03:00 is converted to UTC) or an LSN of 0x and 20 hexadecimal digits such as"
            + " 0x0000002A000001000001, not '0x2A000001000001'",
        error("--seedTable=" + dir.resolve("copy"), "--seedAsOf=0x2A000001000001"));
    assertTrue(
        error("--seedTable=" + dir.resolve("copy"))
            .startsWith("--seedTable needs --seedAsOf: the UTC instant when the copy started"));
    assertEquals(
        "--seedAsOf needs --seedTable (the path or URI of a Delta table holding a copy of the"
            + " source table)",
        error("--seedAsOf=2026-09-28T13:52:00Z"));
    assertEquals(
        "--seedTable cannot be combined with --startingLsn (the seed's --seedAsOf decides where"
            + " the stream starts); pass one or the other",
        error(
            "--seedTable=" + dir.resolve("copy"),
            "--seedAsOf=2026-09-28T13:52:00Z",
            "--bootstrap=false",
            "--startingLsn=latest"));
    SeedCopy seed =
        CdcToDeltaLauncher.config(
                CommandLine.parse(
                    new String[] {
                      "--fakePath=" + dir.resolve("source"),
                      "--buildDemo",
                      "--seedTable=" + dir.resolve("copy"),
                      "--seedAsOf=2026-09-28T10:52:00-03:00",
                      "--seedAllowMissingColumns"
                    },
                    CdcToDeltaOptions.class))
            .seed();
    assertEquals(java.time.Instant.parse("2026-09-28T13:52:00Z"), seed.asOf());
    assertTrue(seed.allowMissingColumns());
    assertEquals("2026-09-28T13:52:00Z", seed.asOfText());
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
        "--startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits"
            + " such as 0x0000002A000001000001, not 'soon'",
        error("--bootstrap=false", "--startingLsn=soon"));
    assertEquals(
        "--startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits"
            + " such as 0x0000002A000001000001, not '0x0000'",
        error("--bootstrap=false", "--startingLsn=0x0000"));
    assertEquals(
        "--startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits"
            + " such as 0x0000002A000001000001, not '2A000001000001'",
        error("--bootstrap=false", "--startingLsn=2A000001000001"));
    assertEquals(
        "--demoScale must be a TPC-H scale factor in (0, 1], not '0'", error("--demoScale=0"));
    // A refused value is echoed as typed, not as the number parsed from it.
    assertEquals(
        "--demoScale must be a TPC-H scale factor in (0, 1], not '2.50'",
        error("--demoScale=2.50"));
    assertEquals(
        "--resnapshotIntervalDays must be 0 or a positive number of days, not '-1'",
        error("--resnapshotIntervalDays=-1"));
    assertEquals(
        "--silverIntervalSeconds must be a positive integer, not '0'",
        error("--silverIntervalSeconds=0"));
    assertEquals("--captureInstance must not be empty", error("--captureInstance="));
  }

  @Test
  void c052SchemaChangePolicyIsClassifyOrFailAndReachesTheRead() {
    assertEquals(
        "--schemaChangePolicy must be 'classify' or 'fail', not 'ignore'",
        error("--schemaChangePolicy=ignore"));
    assertEquals("--schemaChangePolicy must not be empty", error("--schemaChangePolicy="));
    String fake = "--fakePath=" + dir.resolve("src");
    JobConfig defaults =
        CdcToDeltaLauncher.config(
            CommandLine.parse(new String[] {fake, "--buildDemo"}, CdcToDeltaOptions.class));
    assertEquals(SchemaChangePolicy.CLASSIFY, defaults.schemaChangePolicy());
    JobConfig fail =
        CdcToDeltaLauncher.config(
            CommandLine.parse(
                new String[] {fake, "--buildDemo", "--schemaChangePolicy=Fail"},
                CdcToDeltaOptions.class));
    assertEquals(SchemaChangePolicy.FAIL, fail.schemaChangePolicy());
    assertTrue(
        DisplayData.from(TablePlan.read(fail)).items().stream()
            .anyMatch(i -> i.getKey().equals("schemaChangePolicy") && "fail".equals(i.getValue())),
        "the job's read carries the policy");
  }

  /**
   * Only the default directory builds the demo by itself: a mistyped --fakePath is an error naming
   * it and what it expects, before anything is written; --buildDemo builds elsewhere.
   */
  @Test
  void aFakePathWithoutASimulatorDatabaseIsRefusedUnlessItIsTheDemosDefault() throws Exception {
    Path typo = dir.resolve("lakecdc-demo/sorce");
    assertEquals(
        "--fakePath "
            + typo
            + " holds no simulator database (no server.json; docs/fake-format.md describes the"
            + " directory): the demo database is built by itself only in the default"
            + " lakecdc-demo/source; check the path, or add --buildDemo to build the demo there",
        error("--fakePath=" + typo));
    assertFalse(Files.exists(typo), "nothing is written");
    Files.createDirectories(typo);
    assertTrue(error("--fakePath=" + typo).startsWith("--fakePath " + typo + " holds no"));

    assertEquals(
        typo.toString(),
        ((FakeCdcClientFactory)
                CdcToDeltaLauncher.config(
                        CommandLine.parse(
                            new String[] {"--fakePath=" + typo, "--buildDemo"},
                            CdcToDeltaOptions.class))
                    .clientFactory())
            .directory());
    Path db = dir.resolve("db");
    org.lakecdc.io.mssqlcdc.fake.FakeSqlServer.open(db);
    assertEquals(
        db.toString(),
        ((FakeCdcClientFactory)
                CdcToDeltaLauncher.config(
                        CommandLine.parse(
                            new String[] {"--fakePath=" + db}, CdcToDeltaOptions.class))
                    .clientFactory())
            .directory(),
        "a directory holding a simulator database is read");
    assertEquals(
        "lakecdc-demo/source",
        ((FakeCdcClientFactory)
                CdcToDeltaLauncher.config(
                        CommandLine.parse(new String[] {}, CdcToDeltaOptions.class))
                    .clientFactory())
            .directory(),
        "the default builds the demo by itself");
  }

  @Test
  void fakePathAndConnectionUrlAreNotCombined() throws Exception {
    Path password = Files.writeString(dir.resolve("password"), "hunter2\n");
    String[] real = {
      "--connectionUrl=jdbc:sqlserver://db:1433;databaseName=sales",
      "--user=u",
      "--passwordFile=" + password
    };
    assertEquals(
        "--fakePath is for the simulator and --connectionUrl for a real SQL Server: pass one of"
            + " them, not both",
        error(concat(real, "--fakePath=lakecdc-demo/source")));
    assertEquals(
        "--buildDemo is for the simulator and --connectionUrl for a real SQL Server: pass one of"
            + " them, not both",
        error(concat(real, "--buildDemo")));
  }

  @Test
  void aLoginWithoutAServerIsRefusedNotIgnored() {
    assertEquals(
        "--passwordFile applies to --connectionUrl (a real SQL Server's login); the simulator"
            + " needs none: add --connectionUrl, or leave --passwordFile out",
        error("--passwordFile=/tmp/nope"));
    assertEquals(
        "--user applies to --connectionUrl (a real SQL Server's login); the simulator needs"
            + " none: add --connectionUrl, or leave --user out",
        error("--user=u", "--passwordEnv=PATH"));
    assertEquals(
        "--passwordEnv applies to --connectionUrl (a real SQL Server's login); the simulator"
            + " needs none: add --connectionUrl, or leave --passwordEnv out",
        error("--passwordEnv=PATH"));
  }

  private static String[] concat(String[] args, String more) {
    String[] out = java.util.Arrays.copyOf(args, args.length + 1);
    out[args.length] = more;
    return out;
  }

  @Test
  void aFileIsNotASimulatorDirectory() throws Exception {
    Path file = Files.writeString(dir.resolve("afile"), "x");
    assertTrue(error("--fakePath=" + file).startsWith("--fakePath must be a directory"));
  }

  @Test
  void aRealServerNeedsAUserAndExactlyOnePasswordSource() {
    assertEquals(
        "--connectionUrl must be a SQL Server JDBC URL (jdbc:sqlserver://host:1433;"
            + "databaseName=db), not 'postgres://x'",
        error("--connectionUrl=postgres://x"));
    assertEquals(
        "--user must not be empty",
        error("--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d", "--passwordEnv=PATH"));
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
    assertTrue(
        error(
                "--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d",
                "--user=u",
                "--passwordFile=" + dir.resolve("missing"))
            .startsWith("--passwordFile " + dir.resolve("missing") + " cannot be read"));
    assertEquals(
        "--passwordFile " + dir.resolve("missing") + " cannot be read: no such file",
        error(
            "--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d",
            "--user=u",
            "--passwordFile=" + dir.resolve("missing")));
    assertEquals(
        "--passwordFile " + dir + " cannot be read: is a directory",
        error(
            "--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d",
            "--user=u",
            "--passwordFile=" + dir));
    assertEquals(
        "--connectionUrl must not contain the password; give its environment variable"
            + " (passwordEnv) or file (passwordFile) instead",
        error(
            "--connectionUrl=jdbc:sqlserver://h:1433;databaseName=d;password=hunter2",
            "--user=u",
            "--passwordEnv=PATH"));
  }

  @Test
  void connectionSettingsNameTheOptionAndWhatItAccepts() {
    assertEquals(
        "--connectTimeout must be 0 or a positive number of seconds, not '-1'",
        error("--connectTimeout=-1"));
    assertEquals(
        "--lockTimeoutMs must be 0 or a positive number of milliseconds up to 2147483647, not"
            + " '-5'",
        error("--lockTimeoutMs=-5"));
    assertEquals(
        "--sourceTimeZone must be auto, UTC or a Windows time-zone name such as 'E. South America"
            + " Standard Time', not 'UTC'; DROP'",
        error("--sourceTimeZone=UTC'; DROP"));
  }

  @Test
  void policyOptionsAreTheirEnumsAndTakeTheirValuesInAnyCase() {
    JobConfig config =
        CdcToDeltaLauncher.config(
            CommandLine.parse(
                new String[] {
                  "--granularity=Minute",
                  "--isolationLevel=READ_COMMITTED",
                  "--schemaChangePolicy=FAIL",
                  "--onDataLoss= skip ",
                  "--snapshot=Chunked"
                },
                CdcToDeltaOptions.class));
    assertEquals(Granularity.MINUTE, config.granularity());
    assertEquals(IsolationLevel.READ_COMMITTED, config.isolation());
    assertEquals(SchemaChangePolicy.FAIL, config.schemaChangePolicy());
    assertEquals(DataLossPolicy.SKIP, config.onDataLoss());
    assertTrue(config.snapshot().chunked());
    JobConfig defaults =
        CdcToDeltaLauncher.config(CommandLine.parse(new String[] {}, CdcToDeltaOptions.class));
    assertEquals(Granularity.HOUR, defaults.granularity());
    assertEquals(IsolationLevel.READ_COMMITTED, defaults.isolation());
    assertEquals(SchemaChangePolicy.CLASSIFY, defaults.schemaChangePolicy());
    assertEquals(DataLossPolicy.FAIL, defaults.onDataLoss());
    assertFalse(defaults.snapshot().chunked());
  }

  @Test
  void anUnknownOptionNearSeveralNamesListsThemAll() {
    assertEquals(
        "Unknown option --targes; did you mean --tables or --target? (docs/options.md lists the"
            + " options)",
        error("--targes=x"));
    assertEquals(
        "Unknown option --fakepat; did you mean --fakePath? (docs/options.md lists the options)",
        error("--fakepat=x"));
    assertEquals(
        "Unknown option --bronzeTable (docs/options.md lists the options)",
        error("--bronzeTable=x"));
  }

  @Test
  void whatAFirstTimeUserGotWrongIsRefusedBeforeAnythingRuns() throws Exception {
    assertEquals(
        "Unknown option --maxComitsPerBatch; did you mean --maxCommitsPerBatch? (docs/options.md"
            + " lists the options)",
        error("--maxComitsPerBatch=20"));
    Path file = Files.writeString(dir.resolve("existing-file"), "x");
    assertEquals(
        "--target must be a Delta table's directory (existing or to create), not the file '"
            + file
            + "'",
        error("--target=" + file));
    assertEquals(
        "--factsTable must be a Delta table's directory (existing or to create), not the file '"
            + file
            + "'",
        error("--factsTable=" + file));
    assertEquals(
        "--sourceTimeZone applies to --connectionUrl (a SQL Server's clock); the simulator under"
            + " --fakePath keeps its own zone: leave --sourceTimeZone at auto",
        error("--sourceTimeZone=Mars/Olympus"));
    assertEquals(
        "--runForSeconds limits a continuous run: pass --continuous=true with it (a run without"
            + " --continuous ends by itself once it has read up to max_lsn)",
        error("--runForSeconds=10"));
    String columns = error("--columns=garbage((");
    assertTrue(columns.startsWith("--columns: "), columns);
    assertTrue(columns.contains("garbage(("), columns);
  }

  @Test
  void aRealServerIsReadThroughTheTSqlClientWithoutThePassword() throws Exception {
    Path password = Files.writeString(dir.resolve("password"), "hunter2\n");
    JobConfig config =
        CdcToDeltaLauncher.config(
            CommandLine.parse(
                new String[] {
                  "--connectionUrl=jdbc:sqlserver://db.example.com:1433;databaseName=sales",
                  "--user=lakecdc_reader",
                  "--passwordFile=" + password,
                  "--connectTimeout=15",
                  "--lockTimeoutMs=5000",
                  "--sourceTimeZone=E. South America Standard Time",
                  "--captureInstance=dbo_orders"
                },
                CdcToDeltaOptions.class));
    SqlCdcClientFactory factory =
        assertInstanceOf(SqlCdcClientFactory.class, config.clientFactory());
    assertEquals(
        SqlCdcClientFactory.dataSourceConfiguration(
            "jdbc:sqlserver://db.example.com:1433;databaseName=sales",
            "lakecdc_reader",
            PasswordSource.file(password.toString()),
            Duration.ofSeconds(15)),
        factory.dataSourceConfiguration());
    assertEquals(OptionalLong.of(5000), factory.lockTimeoutMs());
    assertEquals(SourceTimeZone.named("E. South America Standard Time"), factory.sourceTimeZone());
    assertFalse(factory.toString().contains("hunter2"));
    assertFalse(
        new String(SerializableUtils.serializeToByteArray(factory), StandardCharsets.ISO_8859_1)
            .contains("hunter2"));

    JobConfig defaults =
        CdcToDeltaLauncher.config(
            CommandLine.parse(
                new String[] {
                  "--connectionUrl=jdbc:sqlserver://db:1433;databaseName=sales",
                  "--user=u",
                  "--passwordEnv=PATH"
                },
                CdcToDeltaOptions.class));
    SqlCdcClientFactory plain = (SqlCdcClientFactory) defaults.clientFactory();
    assertEquals(
        SqlCdcClientFactory.dataSourceConfiguration(
            "jdbc:sqlserver://db:1433;databaseName=sales",
            "u",
            PasswordSource.environmentVariable("PATH"),
            Duration.ofSeconds(30)),
        plain.dataSourceConfiguration());
    assertEquals(OptionalLong.empty(), plain.lockTimeoutMs());
    assertTrue(plain.sourceTimeZone().isAuto());
  }

  @Test
  void theJobsTurnTheDirectRunnersEnforcementChecksOffUnlessTheCommandLineSetsThem() {
    DirectOptions defaults =
        CommandLine.parse(new String[] {}, CdcToDeltaOptions.class).as(DirectOptions.class);
    assertFalse(defaults.isEnforceImmutability());
    assertFalse(defaults.isEnforceEncodability());
    assertEquals(DirectRunner.class, defaults.getRunner());

    DirectOptions printChanges =
        CommandLine.parse(new String[] {}, PrintChangesOptions.class).as(DirectOptions.class);
    assertFalse(printChanges.isEnforceImmutability());
    assertFalse(printChanges.isEnforceEncodability());

    DirectOptions immutability =
        CommandLine.parse(new String[] {"--enforceImmutability=true"}, CdcToDeltaOptions.class)
            .as(DirectOptions.class);
    assertTrue(immutability.isEnforceImmutability());
    assertFalse(immutability.isEnforceEncodability());

    DirectOptions both =
        CommandLine.parse(
                new String[] {"--enforceImmutability", "--enforceEncodability=true"},
                CdcToDeltaOptions.class)
            .as(DirectOptions.class);
    assertTrue(both.isEnforceImmutability());
    assertTrue(both.isEnforceEncodability());
  }

  @Test
  void theJobsLeaveTheDirectRunnersSchedulerAProcessorUnlessTheCommandLineSizesItsPool() {
    assertEquals(1, CommandLine.directRunnerParallelism(1));
    assertEquals(1, CommandLine.directRunnerParallelism(2));
    assertEquals(7, CommandLine.directRunnerParallelism(8));
    DirectOptions defaults =
        CommandLine.parse(new String[] {}, CdcToDeltaOptions.class).as(DirectOptions.class);
    assertEquals(
        CommandLine.directRunnerParallelism(Runtime.getRuntime().availableProcessors()),
        defaults.getTargetParallelism());
    DirectOptions given =
        CommandLine.parse(new String[] {"--targetParallelism=5"}, CdcToDeltaOptions.class)
            .as(DirectOptions.class);
    assertEquals(5, given.getTargetParallelism());
    IllegalArgumentException zero =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                CommandLine.parse(new String[] {"--targetParallelism=0"}, CdcToDeltaOptions.class));
    assertEquals(
        "--targetParallelism=0 is not accepted: the DirectRunner's thread pool size is a positive"
            + " integer (default: one less than the processors, at least 1)",
        zero.getMessage());
  }
}
