package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.TablesOption;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;

/** The chunked snapshot options of the main job: defaults, values and one-line refusals. */
class ChunkedSnapshotOptionsTest {
  @TempDir Path dir;

  private static String error(String... args) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CdcToDeltaLauncher.config(CommandLine.parse(args, CdcToDeltaOptions.class)));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    return e.getMessage();
  }

  @Test
  void theDefaultsAreAWholeSnapshotAndForChunksAMillionRowsFourPerWaveWithTheBackfill() {
    JobConfig config =
        CdcToDeltaLauncher.config(CommandLine.parse(new String[0], CdcToDeltaOptions.class));
    assertEquals(SnapshotSettings.DEFAULTS, config.snapshot());
    assertEquals(SnapshotSettings.Mode.WHOLE, config.snapshot().mode());
    assertEquals(1_000_000, config.snapshot().chunkRows());
    assertEquals(4, config.snapshot().chunksPerWave());
    assertTrue(config.snapshot().backfill());
    assertEquals(0, config.snapshot().maxWaves());
  }

  @Test
  void theChunkedOptionsAreTaken() {
    JobConfig config =
        CdcToDeltaLauncher.config(
            CommandLine.parse(
                new String[] {
                  "--snapshot=Chunked",
                  "--snapshotChunkRows=2",
                  "--chunksPerWave=3",
                  "--backfill=false",
                  "--maxWaves=5"
                },
                CdcToDeltaOptions.class));
    assertEquals(
        new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 3, false, 5), config.snapshot());
    assertEquals("chunked", config.snapshot().mode().toString());
  }

  @Test
  void aBadValueIsRefusedInOneLineNamingTheOptionAndWhatItAccepts() {
    assertEquals("--snapshot must be whole or chunked, not 'full'", error("--snapshot=full"));
    assertEquals(
        "--snapshotChunkRows must be a positive integer, not '0'", error("--snapshotChunkRows=0"));
    assertEquals(
        "--snapshotChunkRows must be a positive integer, not 'many'",
        error("--snapshotChunkRows=many"));
    assertEquals("--chunksPerWave must be a positive integer, not '0'", error("--chunksPerWave=0"));
    assertEquals(
        "--maxWaves must be 0 (to the end) or a positive integer, not '-1'",
        error("--maxWaves=-1"));
    assertEquals("--backfill must be true or false, not 'yes'", error("--backfill=yes"));
  }

  @Test
  void aChunkedSnapshotWithASeedIsRefusedAndNothingIsWritten() throws Exception {
    JobFixture f = new JobFixture(dir);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code;
    try (PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      code =
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--snapshot=chunked",
                "--seedTable=" + dir.resolve("copy"),
                "--seedAsOf=2026-09-28T13:52:00Z"
              },
              err,
              UnaryOperator.identity());
    }
    assertEquals(JobExit.BAD_OPTION, code);
    assertEquals(
        "error: --snapshot=chunked cannot be combined with --seedTable (the seed is the new"
            + " target's snapshot): pass one or the other"
            + System.lineSeparator(),
        bytes.toString(StandardCharsets.UTF_8));
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written");
  }

  @Test
  void aTablesFileLineTakesItsOwnSnapshotMode() throws Exception {
    Path file = dir.resolve("tables.options");
    Files.writeString(
        file,
        "dbo_orders --snapshot=chunked --snapshotChunkRows=5000 --chunksPerWave=2\n"
            + "dbo_lineitem # whole, the command line's\n");
    String[] args = {"--tablesFile=" + file, "--maxWaves=3"};
    CdcToDeltaOptions options = CommandLine.parse(args, CdcToDeltaOptions.class);
    java.util.List<String> settings = new java.util.ArrayList<>();
    for (TablesOption.Table table : TablesOption.tables(options, args)) {
      JobConfig config =
          CdcToDeltaLauncher.config(
              CommandLine.parseOnly(
                  TablesOption.tableArgs(args, table, options), CdcToDeltaOptions.class));
      SnapshotSettings s = config.snapshot();
      settings.add(
          config.captureInstance()
              + " "
              + s.mode()
              + " "
              + s.chunkRows()
              + " "
              + s.chunksPerWave()
              + " "
              + s.maxWaves());
    }
    assertEquals(
        java.util.List.of("dbo_orders chunked 5000 2 3", "dbo_lineitem whole 1000000 4 3"),
        settings);
  }
}
