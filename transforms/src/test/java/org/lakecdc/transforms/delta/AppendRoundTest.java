package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/** A committer round's appends to one table ({@link DeltaTables#appendRound}). */
class AppendRoundTest {
  @TempDir Path dir;

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("batch", OutputType.BIGINT, "Batch"),
          DeltaColumn.nullable("app", OutputType.STRING, "App id"));
  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private final DeltaTables tables = DeltaTables.create();

  private String table() {
    String path = dir.resolve("facts").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    return path;
  }

  private static GroupedAppend append(String app, long batch) {
    return new GroupedAppend(
        SCHEMA,
        List.of(Row.withSchema(SCHEMA).addValues(batch, app).build()),
        app,
        batch,
        Map.of("lakecdc.test." + app, "{\"batch\":" + batch + "}"));
  }

  /** The rows as "app:batch" counted. */
  private Map<String, Integer> rows(String path) {
    Map<String, Integer> counts = new TreeMap<>();
    for (Map<String, Object> row : tables.scan(path)) {
      counts.merge(row.get("app") + ":" + row.get("batch"), 1, Integer::sum);
    }
    return counts;
  }

  /** The actions of a version's commit file, by kind ({@code add}, {@code txn}, ...), counted. */
  private Map<String, Integer> actions(long version) throws IOException {
    Map<String, Integer> counts = new TreeMap<>();
    for (String line :
        Files.readAllLines(
            dir.resolve("facts/_delta_log/" + String.format("%020d.json", version)))) {
      counts.merge(line.substring(2, line.indexOf('"', 2)), 1, Integer::sum);
    }
    return counts;
  }

  private static List<String> outcomes(List<CommitResult> results) {
    List<String> out = new ArrayList<>();
    for (CommitResult r : results) {
      out.add(r.status() + " v" + r.version());
    }
    return out;
  }

  @Test
  void aRoundOfThreeAppIdsIsOneCommitOfOneFileAndItsReplayWritesNothing() throws IOException {
    String path = table();
    long created = tables.version(path);

    List<CommitResult> first =
        tables.appendRound(path, List.of(append("a", 0), append("b", 0), append("c", 0)));

    long round = created + 1;
    assertEquals(
        List.of("COMMITTED v" + round, "COMMITTED v" + round, "COMMITTED v" + round),
        outcomes(first));
    assertEquals(round, tables.version(path));
    assertEquals(1, first.get(0).filesAdded());
    Map<String, Integer> actions = actions(round);
    assertEquals(1, actions.get("add"));
    assertEquals(3, actions.get("txn"));
    assertEquals(3, actions.get("domainMetadata"));
    assertEquals(Map.of("a:0", 1, "b:0", 1, "c:0", 1), rows(path));
    assertEquals(0L, tables.latestTransactionVersion(path, "c").getAsLong());
    assertEquals("{\"batch\":0}", tables.domainMetadata(path, "lakecdc.test.b").orElseThrow());

    // A replay of the round plus b's next batch: only b's batch 1 is new.
    List<CommitResult> replay =
        tables.appendRound(path, List.of(append("a", 0), append("b", 1), append("c", 0)));

    assertEquals(
        List.of(
            "ALREADY_COMMITTED v" + round,
            "COMMITTED v" + (round + 1),
            "ALREADY_COMMITTED v" + round),
        outcomes(replay));
    assertEquals(round + 1, tables.version(path));
    assertEquals(Map.of("a:0", 1, "b:0", 1, "b:1", 1, "c:0", 1), rows(path));
    assertEquals(1, actions(round + 1).get("txn"));
    assertEquals("{\"batch\":1}", tables.domainMetadata(path, "lakecdc.test.b").orElseThrow());
  }

  @Test
  void twoAppendsOfOneAppIdInARoundAreRefusedAndNothingIsWritten() {
    String path = table();
    long created = tables.version(path);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> tables.appendRound(path, List.of(append("a", 0), append("a", 1))));
    assertEquals("Two appends of app id a to " + path + " in one group commit", e.getMessage());
    assertEquals(created, tables.version(path));
    assertEquals(List.of(), tables.appendRound(path, List.of()));
  }
}
