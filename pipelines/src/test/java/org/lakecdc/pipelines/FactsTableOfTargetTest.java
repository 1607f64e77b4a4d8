package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The facts table records every batch of a target: a target whose bronze already has batches is not
 * continued into a facts table that lacks their rows (a new path, an empty facts table), which
 * would cut the facts history off without a word; the command line refuses it, writing nothing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FactsTableOfTargetTest {
  @TempDir Path dir;

  private record Outcome(int code, String err) {}

  private static Outcome run(List<String> args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      int code = CdcToDelta.run(args.toArray(String[]::new), err, UnaryOperator.identity());
      return new Outcome(code, bytes.toString(StandardCharsets.UTF_8));
    }
  }

  private static List<String> args(JobFixture f, String facts) {
    return new ArrayList<>(
        List.of(
            "--fakePath=" + f.dir.resolve("source"),
            "--captureInstance=" + JobFixture.CI,
            "--target=" + f.bronze,
            "--factsTable=" + facts,
            "--controlTable=" + f.control,
            "--bootstrap=false",
            "--maxCommitsPerBatch=2"));
  }

  private static String refusal(String facts, String holds, JobFixture f, StreamPosition last) {
    return "error: --factsTable "
        + TablePaths.normalize(facts)
        + " "
        + holds
        + ", but target "
        + TablePaths.normalize(f.bronze)
        + " already has batches (bronze holds them up to batch "
        + last.batchId()
        + ", end LSN "
        + last.endLsn()
        + "): the facts rows of its earlier batches are not there; point --factsTable at the"
        + " table that holds this target's facts";
  }

  @Test
  void aTargetWithBatchesIsNotContinuedIntoANewOrEmptyFactsTable() {
    JobFixture f = JobFixture.history(dir);
    Outcome first = run(args(f, f.facts));
    assertEquals(JobExit.OK, first.code(), first.err());
    StreamPosition last =
        StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
            .orElseThrow();
    // Bronze holds the batches with rows; the last batch, of an idle entry only, is in facts.
    assertEquals(4, last.batchId());
    assertEquals("0x0000002A000001000091", last.endLsn().toString());
    List<String> batches = f.factBatches();
    assertEquals(
        List.of(
            "0:6:0x0000002A000001000011",
            "1:6:0x0000002A000001000031",
            "2:6:0x0000002A000001000051",
            "3:6:0x0000002A000001000071",
            "4:4:0x0000002A000001000091",
            "5:0:0x0000002A0000010000A1"),
        batches);
    long bronzeVersion = f.tables.version(f.bronze);

    String fresh = dir.resolve("delta/facts_new").toString();
    Outcome absent = run(args(f, fresh));
    assertEquals(JobExit.BAD_OPTION, absent.code(), absent.err());
    assertEquals(List.of(refusal(fresh, "does not exist", f, last)), absent.err().lines().toList());
    assertFalse(Files.exists(Path.of(fresh)), "no facts table was created");

    String empty = dir.resolve("delta/facts_empty").toString();
    f.tables.createIfAbsent(empty, FactsTable.definition());
    long emptyVersion = f.tables.version(empty);
    Outcome none = run(args(f, empty));
    assertEquals(JobExit.BAD_OPTION, none.code(), none.err());
    assertEquals(
        List.of(refusal(empty, "holds no facts of this target", f, last)),
        none.err().lines().toList());
    assertEquals(emptyVersion, f.tables.version(empty), "nothing was written to it");
    assertEquals(bronzeVersion, f.tables.version(f.bronze), "nothing was written to bronze");

    // The facts table the target was written with still takes it on.
    Outcome again = run(args(f, f.facts));
    assertEquals(JobExit.OK, again.code(), again.err());
    assertEquals(batches, f.factBatches());
  }
}
