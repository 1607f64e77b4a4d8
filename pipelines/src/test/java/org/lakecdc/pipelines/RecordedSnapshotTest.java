package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.backfill.BackfillWaves;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SeedCopy;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * A target with a recorded snapshot is never new again, whatever a later run's {@code --snapshot},
 * {@code --bootstrap} or {@code --seedTable} (docs/tables.md "Whose position is it"): a chunked
 * snapshot open or complete, a whole one, a re-snapshot's generation. Each case on {@code
 * dbo.codes} (a varchar key; rows a, b, c before CDC; one update of a after): a later run streams
 * the insert of d as a change row, takes no second snapshot and writes no second {@code
 * snapshot_open} row; and a reset target (its bronze deleted) is new again.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RecordedSnapshotTest {
  private static final String CODES = "dbo.codes";
  private static final String CI = "dbo_codes";
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  @TempDir Path dir;

  private FakeSqlServer db;
  private final DeltaTables tables = DeltaTables.create();
  private String bronze;
  private String facts;
  private String control;
  private String printed = "";

  /** {@code dbo.codes} with a, b, c loaded before CDC, CDC enabled, then one update of a. */
  private void codes() {
    db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        CODES,
        List.of(ColumnDefinition.of("code", "varchar(10)"), ColumnDefinition.of("label", "int")),
        List.of("code"));
    db.loadRows(
        CODES,
        List.of(
            Map.of("code", "a", "label", 1),
            Map.of("code", "b", "label", 2),
            Map.of("code", "c", "label", 3)));
    db.enableCdc(CODES);
    db.transaction(at(1)).update(CODES, List.of("a"), Map.of("label", 10)).commit();
    bronze = dir.resolve("delta/dbo_codes").toString();
    facts = dir.resolve("delta/facts").toString();
    control = dir.resolve("delta/table_finalization").toString();
  }

  private static Instant at(long minutes) {
    return T0.plusSeconds(60 * minutes);
  }

  /** The main job's default options for {@code dbo_codes}: a whole bootstrap, backfill on. */
  private JobConfig defaults() {
    return JobConfig.builder(db.clientFactory(), CI, bronze, facts, control).build();
  }

  /** {@code --snapshot=chunked --backfill=<backfill> --snapshotChunkRows=100}. */
  private JobConfig chunked(boolean backfill) {
    return defaults().toBuilder()
        .snapshot(
            new SnapshotSettings(
                SnapshotSettings.Mode.CHUNKED,
                100,
                SnapshotSettings.DEFAULT_CHUNKS_PER_WAVE,
                backfill,
                0))
        .build();
  }

  private JobSummary run(JobConfig config) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      try {
        return CdcToDeltaJob.run(config, JobFixture.direct(), out, () -> {});
      } finally {
        printed = bytes.toString(StandardCharsets.UTF_8);
      }
    }
  }

  /** Runs {@code Backfill} with the default options and returns its last line. */
  private String backfill() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      BackfillWaves.Result result =
          BackfillWaves.run(defaults(), JobFixture.direct(), 0, null, Clock.systemUTC(), out);
      return BackfillWaves.stateLine(defaults(), result);
    }
  }

  private Lsn insertD() {
    return db.transaction(at(3)).insert(CODES, Map.of("code", "d", "label", 4)).commit();
  }

  /** Bronze's rows as "op/code/label/snapshot-or-lsn", sorted: a row written twice shows twice. */
  private List<String> bronzeRows() {
    List<String> out = new ArrayList<>();
    for (Row r : tables.scan(bronze, DeltaColumn.toBeamSchema(tables.describe(bronze).columns()))) {
      String snapshot = r.getString(MetadataColumns.SNAPSHOT);
      out.add(
          r.getInt32(MetadataColumns.OPERATION)
              + "/"
              + r.getString("code")
              + "/"
              + r.getValue("label")
              + "/"
              + (snapshot != null ? "S=" + snapshot : r.getString(MetadataColumns.START_LSN)));
    }
    out.sort(null);
    return out;
  }

  private List<Row> events(String event) {
    return tables.scan(facts, FactsTable.SCHEMA).stream()
        .filter(r -> event.equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  private Lsn maxLsn() {
    return db.openClient().maxLsn().orElseThrow();
  }

  private static void delete(Path path) {
    try (Stream<Path> files = Files.walk(path)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The chunked snapshot of the issue: opened by {@code --snapshot=chunked --backfill=false
   * --snapshotChunkRows=100}, d inserted, finished by Backfill.
   *
   * @return S
   */
  private Lsn chunkedSnapshotFinishedByBackfill() {
    Lsn s = maxLsn();
    run(chunked(false));
    assertTrue(
        printed.contains(
            "New target " + bronze + ": opened a chunked snapshot of dbo_codes at S = " + s),
        printed);
    insertD();
    assertEquals("Backfill of dbo_codes: done; chunks 1/1, 3 rows, 1 wave this run", backfill());
    return s;
  }

  @Test
  void aDefaultRunAfterAChunkedSnapshotFinishedByBackfillStreamsTheInsertOfD() {
    codes();
    Lsn s = chunkedSnapshotFinishedByBackfill();
    Lsn d = maxLsn();

    JobSummary summary = run(defaults());
    assertFalse(printed.contains("New target"), printed);
    assertFalse(printed.contains("taking a snapshot"), printed);
    assertEquals(
        List.of("0/a/10/S=" + s, "0/b/2/S=" + s, "0/c/3/S=" + s, "2/d/4/" + d), bronzeRows());
    assertEquals(1, events("snapshot_open").size(), "one snapshot_open row");
    assertEquals(1, events("bootstrap").size(), "one bootstrap row");
    assertEquals(1, summary.batches());
    assertEquals(d, summary.position().orElseThrow().endLsn());
  }

  @Test
  void theSameWithoutBootstrapOrWithTheWholeModeOrWithChunkedStreamsOnlyTheChangesAfterS() {
    codes();
    Lsn s = chunkedSnapshotFinishedByBackfill();
    Lsn d = maxLsn();
    run(defaults().toBuilder().bootstrap(false).build());
    assertFalse(printed.contains("New target"), printed);
    List<String> expected = List.of("0/a/10/S=" + s, "0/b/2/S=" + s, "0/c/3/S=" + s, "2/d/4/" + d);
    assertEquals(expected, bronzeRows(), "the update of a before S is not streamed");
    Lsn e = db.transaction(at(4)).delete(CODES, List.of("b")).commit();
    run(chunked(true));
    assertFalse(printed.contains("New target"), printed);
    assertEquals(
        List.of("0/a/10/S=" + s, "0/b/2/S=" + s, "0/c/3/S=" + s, "1/b/2/" + e, "2/d/4/" + d),
        bronzeRows());
    assertEquals(1, events("snapshot_open").size());
    assertEquals(1, events("bootstrap").size());
  }

  @Test
  void anOpenChunkedSnapshotIsTheTargetsAndADefaultRunIsRefusedWithoutWritingAnything() {
    codes();
    Lsn s = maxLsn();
    run(chunked(false));
    Lsn d = insertD();
    long factsVersion = tables.version(facts);
    long bronzeVersion = tables.version(bronze);
    OptionRefusedException e = assertThrows(OptionRefusedException.class, () -> run(defaults()));
    assertEquals(
        "Target "
            + bronze
            + " has a chunked snapshot open at S = "
            + s
            + " (generation 0, chunks 0/1, 0 rows) that is not complete: run Backfill (or"
            + " CdcToDelta with --snapshot=chunked) until it is done before running with"
            + " --snapshot=whole",
        e.getMessage());
    assertEquals(factsVersion, tables.version(facts), "nothing written to facts");
    assertEquals(bronzeVersion, tables.version(bronze), "nor to bronze");

    // Without a bootstrap the run takes no snapshot: it streams from S, the chunks stay open.
    run(defaults().toBuilder().bootstrap(false).build());
    assertFalse(printed.contains("New target"), printed);
    assertEquals(List.of("2/d/4/" + d), bronzeRows());
    assertEquals(1, events("snapshot_open").size());
    assertEquals("Backfill of dbo_codes: done; chunks 1/1, 3 rows, 1 wave this run", backfill());
    assertEquals(
        List.of("0/a/10/S=" + s, "0/b/2/S=" + s, "0/c/3/S=" + s, "2/d/4/" + d), bronzeRows());
  }

  @Test
  void aSeedOfATargetWithAChunkedSnapshotIsRefused() {
    codes();
    Lsn s = chunkedSnapshotFinishedByBackfill();
    long factsVersion = tables.version(facts);
    long bronzeVersion = tables.version(bronze);
    String copy = dir.resolve("copies/codes").toString();
    JobConfig seeded = defaults().withSeed(SeedCopy.parse(copy, s.toString(), false));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run(seeded));
    assertEquals(
        "--seedTable "
            + copy
            + ": target "
            + bronze
            + " already holds a chunked snapshot at S = "
            + s
            + " (generation 0, complete): a second snapshot is refused; run without --seedTable"
            + " to go on streaming, or seed a new target",
        e.getMessage());
    assertEquals(factsVersion, tables.version(facts));
    assertEquals(bronzeVersion, tables.version(bronze));
  }

  @Test
  void aWholeSnapshotIsTheTargetsAlsoForAChunkedRun() {
    codes();
    Lsn s = maxLsn();
    run(defaults());
    Lsn d = insertD();
    run(chunked(true));
    assertFalse(printed.contains("New target"), printed);
    assertFalse(printed.contains("chunked snapshot"), printed);
    assertEquals(
        List.of("0/a/10/S=" + s, "0/b/2/S=" + s, "0/c/3/S=" + s, "2/d/4/" + d), bronzeRows());
    assertEquals(1, events("snapshot_open").size());
    assertEquals(1, events("bootstrap").size());
  }

  /** Purges the changes after the target's position: a commit, then cleanup to an idle entry. */
  private void purge(int minute) {
    db.transaction(at(minute)).update(CODES, List.of("c"), Map.of("label", 30 + minute)).commit();
    db.cleanup(CI, db.idle(at(minute + 1)));
  }

  private StreamPosition bronzePosition() {
    return StreamPosition.fromJson(tables.domainMetadata(bronze, StreamPosition.BRONZE_DOMAIN))
        .orElseThrow();
  }

  @Test
  void aReSnapshotsGenerationIsTheTargetsWhateverTheLaterRunsSnapshotMode() {
    codes();
    run(defaults());
    purge(10);
    // A chunked re-snapshot, read beside the stream, then a whole run goes on in generation 1.
    run(chunked(true).toBuilder().onDataLoss(DataLossPolicy.RESNAPSHOT).build());
    assertEquals("dbo_codes.g1", bronzePosition().appId());
    Lsn d = insertD();
    run(defaults());
    assertFalse(printed.contains("taking a snapshot"), printed);
    assertEquals("dbo_codes.g1", bronzePosition().appId());
    assertEquals(d, bronzePosition().endLsn());
    // A whole re-snapshot into generation 2, then a chunked run goes on in generation 2.
    purge(20);
    run(
        defaults().toBuilder()
            .onDataLoss(DataLossPolicy.RESNAPSHOT)
            .resnapshotIntervalDays(0)
            .build());
    assertEquals("dbo_codes.g2", bronzePosition().appId());
    Lsn e = db.transaction(at(30)).delete(CODES, List.of("b")).commit();
    run(chunked(true));
    assertFalse(printed.contains("opened a chunked snapshot"), printed);
    assertEquals("dbo_codes.g2", bronzePosition().appId());
    assertEquals(e, bronzePosition().endLsn());
    assertEquals(3, events("snapshot_open").size(), "the bootstrap's and two re-snapshots'");
  }

  @Test
  void aResetTargetIsNewAgainAlsoAfterAChunkedSnapshot() {
    codes();
    chunkedSnapshotFinishedByBackfill();
    delete(Path.of(bronze));
    // Chunked again: a snapshot of its own, at its own S, read beside the stream.
    Lsn s2 = maxLsn();
    run(chunked(true));
    assertTrue(
        printed.contains(
            "New target " + bronze + ": opened a chunked snapshot of dbo_codes at S = " + s2),
        printed);
    assertEquals(
        List.of("0/a/10/S=" + s2, "0/b/2/S=" + s2, "0/c/3/S=" + s2, "0/d/4/S=" + s2), bronzeRows());
    delete(Path.of(bronze));
    // And whole: a new bootstrap.
    run(defaults());
    assertTrue(printed.contains("New target " + bronze + ": taking a snapshot"), printed);
    assertEquals(
        List.of("0/a/10/S=" + s2, "0/b/2/S=" + s2, "0/c/3/S=" + s2, "0/d/4/S=" + s2), bronzeRows());
  }

  @Test
  void aChunkedSnapshotUnderAnotherAppIdIsRefusedNotTakenForANewTarget() {
    codes();
    JobConfig other = chunked(false).toBuilder().appId("codes-v1").build();
    run(other);
    String refusal =
        "Target "
            + bronze
            + " is written by app id 'codes-v1', not 'dbo_codes': run with --appId=codes-v1 or"
            + " write a new target";
    for (int i = 0; i < 2; i++) {
      long factsVersion = tables.version(facts);
      long bronzeVersion = tables.version(bronze);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> run(defaults()));
      assertEquals(refusal, e.getMessage());
      assertEquals(factsVersion, tables.version(facts), "nothing written to facts");
      assertEquals(bronzeVersion, tables.version(bronze), "nor to bronze");
      // Its chunks read: bronze itself names the app id now.
      BackfillWaves.run(
          other,
          JobFixture.direct(),
          0,
          null,
          Clock.systemUTC(),
          new PrintStream(OutputStream.nullOutputStream()));
    }
    assertEquals(1, events("snapshot_open").size());
  }

  @Test
  void aTargetWhoseChunksTheGivenFactsTableDoesNotRecordIsRefused() {
    codes();
    Lsn s = chunkedSnapshotFinishedByBackfill();
    String elsewhere = dir.resolve("delta/other_facts").toString();
    long bronzeVersion = tables.version(bronze);
    JobConfig config =
        JobConfig.builder(db.clientFactory(), CI, bronze, elsewhere, control).build();
    OptionRefusedException e = assertThrows(OptionRefusedException.class, () -> run(config));
    assertEquals(
        "--factsTable "
            + elsewhere
            + " holds no facts of the chunked snapshot at S = "
            + s
            + " whose chunks target "
            + bronze
            + " already holds (up to chunk 0): point --factsTable at the table that holds this"
            + " target's facts",
        e.getMessage());
    assertFalse(tables.exists(elsewhere), "no facts table created");
    assertEquals(bronzeVersion, tables.version(bronze), "nothing written to bronze");
  }

  @Test
  void aRunWithAStartingLsnAfterAChunkedSnapshotStartsAtS() {
    codes();
    Lsn s = chunkedSnapshotFinishedByBackfill();
    Lsn d = maxLsn();
    run(defaults().toBuilder().bootstrap(false).startingLsn(StartingLsn.latest()).build());
    assertFalse(printed.contains("New target"), printed);
    assertEquals(
        List.of("0/a/10/S=" + s, "0/b/2/S=" + s, "0/c/3/S=" + s, "2/d/4/" + d), bronzeRows());
  }
}
