package org.lakecdc.pipelines.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * A target's position is its own (docs/behaviour.md §2.2; docs/tables.md "Whose position is it",
 * "Resetting a target"): a new target sharing the facts table never takes another target's
 * position, a reset target starts again, one table has one name, an empty bronze takes corrected
 * columns, and the bootstrap row always has its count.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TargetIdentityTest {
  @TempDir Path dir;

  private JobFixture streamed() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    return f;
  }

  private JobConfig second(JobFixture f) {
    return JobConfig.builder(
            f.db.clientFactory(),
            CI,
            dir.resolve("delta/dbo_orders_second").toString(),
            f.facts,
            f.control)
        .bootstrap(false)
        .maxCommitsPerBatch(4)
        .build();
  }

  private String refusal(JobFixture f, String secondBronze) {
    Lsn max = f.db.openClient().maxLsn().orElseThrow();
    return "App id 'dbo_orders' is already used for target "
        + f.bronze
        + " in the facts table "
        + f.facts
        + " (batch 2, end LSN "
        + max
        + "): target "
        + secondBronze
        + " needs an app id of its own; run with --appId=dbo_orders_second (an app id no other"
        + " target uses)";
  }

  private static void delete(Path path) {
    try (Stream<Path> files = Files.walk(path)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private List<Row> controlRows(JobFixture f) {
    return f.tables.scan(f.control, ControlTable.SCHEMA);
  }

  @Test
  void aSecondTargetUnderTheSameAppIdIsRefusedNamingBothBeforeAnythingIsWritten() {
    JobFixture f = streamed();
    long factsVersion = f.tables.version(f.facts);
    long controlVersion = f.tables.version(f.control);
    JobConfig second = second(f);
    String expected = refusal(f, second.bronzePath());

    for (JobConfig config :
        List.of(
            second,
            second.toBuilder().bootstrap(true).build(),
            second.toBuilder().startingLsn(StartingLsn.earliest()).build())) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> f.run(config));
      assertEquals(expected, e.getMessage());
      assertFalse(f.tables.exists(second.bronzePath()), "no bronze is created");
      assertEquals(factsVersion, f.tables.version(f.facts), "nothing is written to facts");
      assertEquals(controlVersion, f.tables.version(f.control), "nor to control");
    }
  }

  @Test
  void anotherCaptureInstanceUnderACopiedAppIdIsRefused() {
    JobFixture f = streamed();
    f.db.createTable(
        "dbo.lineitem",
        List.of(ColumnDefinition.of("l_id", "int"), ColumnDefinition.of("l_qty", "int")),
        List.of("l_id"));
    f.db.enableCdc("dbo.lineitem");
    f.db.transaction(at(130)).insert("dbo.lineitem", Map.of("l_id", 1, "l_qty", 5)).commit();
    String lineitem = dir.resolve("delta/dbo_lineitem").toString();
    JobConfig copied =
        JobConfig.builder(f.db.clientFactory(), "dbo_lineitem", lineitem, f.facts, f.control)
            .appId(CI)
            .build();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.run(copied));
    assertTrue(
        e.getMessage()
            .startsWith("App id 'dbo_orders' is already used for target " + f.bronze + " in the"),
        e.getMessage());
    assertTrue(
        e.getMessage().endsWith("run with --appId=dbo_lineitem (an app id no other target uses)"),
        e.getMessage());
    assertFalse(f.tables.exists(lineitem));
  }

  @Test
  void aTargetResetByDeletingItsDirectoryStartsAgainAndWritesEveryChange() {
    JobFixture f = streamed();
    List<String> before = f.bronzeChanges();
    assertEquals(28, before.size());
    String oldId = f.tables.tableId(f.bronze);
    delete(Path.of(f.bronze));

    // A crash before the first commit of the new table: the old table's verdict is gone already.
    assertThrows(RuntimeException.class, () -> f.runCrashing(CrashPoint.AFTER_DATA_FILES, 0));
    assertTrue(
        f.lastOutput.contains("which no longer exists: " + f.bronze + " starts as a new target"),
        f.lastOutput);
    assertTrue(
        f.lastOutput.contains(
            "Removed the verdict finalized_until = 2026-09-28T15:00 of a former table at "
                + f.bronze),
        f.lastOutput);
    assertEquals(List.of(), controlRows(f), "no verdict vouches for the empty new table");

    JobSummary summary = f.run();
    assertNotEquals(oldId, f.tables.tableId(f.bronze));
    assertEquals(before, f.bronzeChanges(), "every change once, in the same batches");
    assertEquals(3, summary.batches());
    assertEquals(28L, summary.rows());
    assertEquals(
        Optional.of(LocalDateTime.parse("2026-09-28T15:00")),
        new Finalization(f.tables, f.control, java.time.Clock.systemUTC()).verdict(f.bronze));
    // The facts table keeps the old table's batches as history and has the new table's too.
    assertEquals(
        List.of("0:12:", "0:12:", "1:12:", "1:12:", "2:4:", "2:4:"),
        f.factBatches().stream()
            .map(b -> b.substring(0, b.lastIndexOf(':') + 1))
            .sorted()
            .toList());
    StreamPosition recorded =
        StreamPosition.fromJson(f.tables.domainMetadata(f.facts, StreamPosition.factsDomain(CI)))
            .orElseThrow();
    assertEquals(f.bronze, recorded.target());
    assertEquals(f.tables.tableId(f.bronze), recorded.targetId());
  }

  @Test
  void aResetTargetSaysItStartsNewOnceItsSnapshotIsCommittedNoMore() {
    JobFixture f = streamed();
    delete(Path.of(f.bronze));
    JobConfig boot = f.config().toBuilder().bootstrap(true).build();
    f.run(boot);
    assertTrue(f.lastOutput.contains("starts as a new target"), f.lastOutput);
    f.run(boot);
    assertFalse(f.lastOutput.contains("no longer exists"), f.lastOutput);
    assertEquals(24, f.tables.scan(f.bronze).size(), "one snapshot of the 24 rows");
  }

  @Test
  void aNewTargetTakesTheAppIdOfATargetThatNoLongerExists() {
    JobFixture f = streamed();
    List<String> before = f.bronzeChanges();
    delete(Path.of(f.bronze));
    JobConfig second = second(f);
    f.run(second);
    assertTrue(f.lastOutput.contains("starts as a new target"), f.lastOutput);
    assertEquals(
        before.size(),
        f.tables.scan(second.bronzePath()).size(),
        "the new target holds every change");
  }

  @Test
  void relativeAbsoluteAndFileUriSpellingsOfOneBronzeShareOneControlRowAndFactsTarget() {
    JobFixture f = JobFixture.history(dir);
    JobConfig absolute = f.config();
    f.run(
        JobConfig.builder(f.db.clientFactory(), CI, "file://" + f.bronze + "/", f.facts, f.control)
            .bootstrap(false)
            .maxCommitsPerBatch(4)
            .build());
    f.db.transaction(at(130)).insert(ORDERS, JobFixture.order(1000, "new", "1.00")).commit();
    f.run(
        JobConfig.builder(
                f.db.clientFactory(),
                CI,
                dir.resolve("delta/./x/../dbo_orders").toString(),
                "file:" + f.facts,
                f.control + "/")
            .bootstrap(false)
            .maxCommitsPerBatch(4)
            .build());
    assertEquals(f.bronze, absolute.bronzePath());
    List<Row> control = controlRows(f);
    assertEquals(1, control.size());
    assertEquals(f.bronze, control.get(0).getString(ControlTable.TABLE_NAME));
    assertEquals(
        List.of(f.bronze),
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .map(r -> r.getString(FactsTable.TARGET))
            .distinct()
            .toList());
    assertEquals(29, f.bronzeChanges().size());
  }

  @Test
  void anEmptyBronzeLeftByAWrongColumnsTypeTakesTheCorrectedColumns() {
    JobFixture f = JobFixture.history(dir);
    JobConfig wrong =
        f.config().toBuilder().bootstrap(true).columns("order_id INT, status INT").build();
    // A declared type that cannot hold the captured varchar(20) is refused before anything is
    // created ...
    assertThrows(OptionRefusedException.class, () -> f.run(wrong));
    assertFalse(f.tables.exists(f.bronze));
    // ... but a bronze an earlier run left created with such a type and without a row (a value
    // that did not convert, before the check) takes the corrected columns.
    f.tables.createIfAbsent(
        f.bronze,
        org.lakecdc.transforms.bronze.BronzeTable.definition(
            org.lakecdc.io.mssqlcdc.schema.ChangeSchema.of(
                org.lakecdc.io.mssqlcdc.schema.ColumnsDdl.parse("order_id INT, status INT"),
                true)));
    assertFalse(f.tables.hasDataFiles(f.bronze));

    JobConfig right = wrong.toBuilder().columns("order_id INT, status STRING").build();
    f.run(right);
    assertTrue(
        f.lastOutput.contains(
            "Bronze " + f.bronze + " holds no row yet: it takes this run's columns"),
        f.lastOutput);
    DeltaColumn status =
        f.tables.describe(f.bronze).columns().stream()
            .filter(c -> c.name().equals("status"))
            .findFirst()
            .orElseThrow();
    assertEquals(org.lakecdc.io.mssqlcdc.schema.OutputType.STRING, status.type());
    // The table's rows at the snapshot: 24 inserted, order 200 deleted, order 900 inserted.
    assertEquals(24, f.tables.scan(f.bronze).size());
  }

  @Test
  void theBootstrapRowWrittenAfterACrashHasTheSnapshotsRows() {
    JobFixture f = JobFixture.history(dir);
    JobConfig boot = f.config().toBuilder().bootstrap(true).build();
    f.run(boot);
    long rows =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> FactsTable.EVENT_BOOTSTRAP.equals(r.getString(FactsTable.EVENT)))
            .findFirst()
            .orElseThrow()
            .getInt64(FactsTable.ROWS);
    assertEquals(24L, rows);

    // A facts table that missed the bootstrap event (the crash between the snapshot commit and
    // the event): the event written later carries the rows recorded with the snapshot.
    String otherFacts = dir.resolve("delta/facts_after_crash").toString();
    f.run(
        JobConfig.builder(f.db.clientFactory(), CI, f.bronze, otherFacts, f.control)
            .maxCommitsPerBatch(4)
            .build());
    Row event =
        f.tables.scan(otherFacts, FactsTable.SCHEMA).stream()
            .filter(r -> FactsTable.EVENT_BOOTSTRAP.equals(r.getString(FactsTable.EVENT)))
            .findFirst()
            .orElseThrow();
    assertEquals(24L, event.getInt64(FactsTable.ROWS));
  }
}
