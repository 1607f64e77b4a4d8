package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.locals3.LocalS3Server;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;

/**
 * The proof that commits to one table from many JVMs are safe on S3 with {@link
 * S3ConditionalLogStore}, and are not with Delta's stock {@code S3SingleDriverLogStore}: {@value
 * #WRITERS} writer JVMs ({@link S3Writer}) started together append {@value #APPENDS} facts rows
 * each, one commit per row with its own transaction identifier, to one facts table on the local S3
 * server; and {@value #WRITERS} JVMs advance the verdicts of their own targets in one shared
 * control table (a rewrite of the whole table per advance).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class S3ConcurrentCommitsTest {
  static final int WRITERS = 4;

  /**
   * Appends per writer with the conditional store: 120 commits, so the facts table's checkpoint
   * (every 100 versions) is written while the writers still commit; more only cost the build time.
   */
  static final int APPENDS = 30;

  /**
   * Appends per writer against the stock store: enough to lose commits in every trial (4 x 50 lost
   * 21 to 38 of 200), fewer than the safe proof's, to keep the build's time.
   */
  static final int STOCK_APPENDS = 25;

  /**
   * Verdict advances per writer: each is a rewrite of the whole shared control table racing the
   * other writers' (16 in all).
   */
  static final int ADVANCES = 4;

  @TempDir static Path dir;
  private static LocalS3Server server;

  @BeforeAll
  static void startServer() throws Exception {
    server = LocalS3Server.start(dir.resolve("s3"));
    server.createBucket("proof");
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static Map<String, String> conf(String logStore) {
    Map<String, String> conf = new LinkedHashMap<>(server.hadoopConf());
    if (logStore != null) {
      conf.put(S3ConditionalLogStore.CONF_KEY, logStore);
    }
    return conf;
  }

  /** What the writers were told and what the table holds afterwards. */
  private record Outcome(
      S3Writer.Result writers,
      int reportedCommits,
      Set<Long> distinctReportedVersions,
      Set<String> rowsInTable,
      Set<String> txnsInLog,
      Map<Long, String> reportedTxnByVersion,
      Map<Long, String> loggedTxnByVersion) {}

  private static Outcome appendConcurrently(String table, String logStore, int appends)
      throws Exception {
    Map<String, String> conf = conf(logStore);
    DeltaTables tables = DeltaTables.create(conf);
    tables.createIfAbsent(table, FactsTable.definition());
    S3Writer.Result result = S3Writer.runAll("append", table, WRITERS, appends, conf);
    int reported = 0;
    Set<Long> versions = new HashSet<>();
    Map<Long, String> reportedByVersion = new HashMap<>();
    for (List<String> mine : result.lines()) {
      for (String line : mine) {
        String[] f = line.split(" ");
        assertEquals("COMMITTED", f[2], line);
        reported++;
        long version = Long.parseLong(f[3]);
        versions.add(version);
        reportedByVersion.put(version, "writer-" + f[0] + "/" + f[1]);
      }
    }
    DeltaTables reader = DeltaTables.create(conf);
    Set<String> rows = new HashSet<>();
    List<String> all = new ArrayList<>();
    for (Map<String, Object> row : reader.scan(table)) {
      String key = row.get(FactsTable.APP_ID) + "/" + row.get(FactsTable.BATCH_ID);
      rows.add(key);
      all.add(key);
    }
    assertEquals(rows.size(), all.size(), "no row is in the table twice");
    Set<String> txns = new HashSet<>();
    Map<Long, String> loggedByVersion = new TreeMap<>();
    for (CommitSummary commit : reader.history(table)) {
      if (commit.txnAppId() != null) {
        String txn = commit.txnAppId() + "/" + commit.txnVersion().getAsLong();
        txns.add(txn);
        loggedByVersion.put(commit.version(), txn);
      }
    }
    return new Outcome(result, reported, versions, rows, txns, reportedByVersion, loggedByVersion);
  }

  private static Set<String> expectedAppends() {
    Set<String> expected = new HashSet<>();
    for (int w = 0; w < WRITERS; w++) {
      for (int i = 0; i < APPENDS; i++) {
        expected.add("writer-" + w + "/" + i);
      }
    }
    return expected;
  }

  @Test
  void appendsFromManyJvmsAllLandWithTheConditionalLogStore() throws Exception {
    Outcome o = appendConcurrently("s3a://proof/safe/facts", null, APPENDS);
    int total = WRITERS * APPENDS;
    assertEquals(120, total);
    assertEquals(List.of(0, 0, 0, 0), o.writers().exitCodes(), o.writers().errors().toString());
    assertEquals(total, o.reportedCommits());
    // Every writer was told a version of its own: no version was given to two commits.
    assertEquals(total, o.distinctReportedVersions().size());
    // Every row and every transaction identifier is in the table, once.
    assertEquals(expectedAppends(), o.rowsInTable());
    assertEquals(expectedAppends(), o.txnsInLog());
    // Each version holds the commit its writer was told it made: nothing was overwritten.
    assertEquals(o.reportedTxnByVersion(), o.loggedTxnByVersion());
  }

  @Test
  void theStockS3LogStoreLosesAppendsOfConcurrentJvms() throws Exception {
    Outcome o =
        appendConcurrently(
            "s3a://proof/stock/facts", "io.delta.storage.S3SingleDriverLogStore", STOCK_APPENDS);
    // Kernel told the writers that their appends were committed (a writer may also have died
    // reading a checkpoint another writer of the same version overwrote under it) ...
    assertTrue(o.reportedCommits() > 0);
    // ... but writers in different JVMs were told the same versions, and one of each such pair
    // overwrote the other's commit file: its row and its transaction identifier are gone.
    assertTrue(
        o.distinctReportedVersions().size() < o.reportedCommits(),
        o.distinctReportedVersions().size() + " versions for " + o.reportedCommits() + " commits");
    Set<String> lost = new HashSet<>();
    for (List<String> mine : o.writers().lines()) {
      for (String line : mine) {
        String[] f = line.split(" ");
        String txn = "writer-" + f[0] + "/" + f[1];
        if (!o.rowsInTable().contains(txn)) {
          lost.add(txn);
        }
      }
    }
    assertFalse(lost.isEmpty(), "no reported commit was lost");
    Set<String> lostTxns = new HashSet<>(lost);
    lostTxns.retainAll(o.txnsInLog());
    assertEquals(Set.of(), lostTxns, "a lost commit's transaction identifier is gone too");
  }

  @Test
  void controlRowRewritesOfManyJvmsLoseNoVerdictAndNoneGoesBack() throws Exception {
    String control = "s3a://proof/safe/table_finalization";
    Map<String, String> conf = conf(null);
    DeltaTables tables = DeltaTables.create(conf);
    tables.createIfAbsent(control, ControlTable.definition());
    S3Writer.Result result = S3Writer.runAll("control", control, WRITERS, ADVANCES, conf);
    assertEquals(List.of(0, 0, 0, 0), result.exitCodes(), result.errors().toString());
    List<List<String>> lines = result.lines();
    LocalDateTime last = LocalDateTime.ofInstant(S3Writer.T0, java.time.ZoneOffset.UTC);
    LocalDateTime finalVerdict = last.plusMinutes(ADVANCES);
    for (int w = 0; w < WRITERS; w++) {
      assertEquals(ADVANCES, lines.get(w).size(), lines.get(w).toString());
      assertEquals(w + " " + ADVANCES + " " + finalVerdict, lines.get(w).get(ADVANCES - 1));
    }
    // The table's last version holds every target's last verdict ...
    DeltaTables reader = DeltaTables.create(conf);
    Map<String, Object> finalRows = new TreeMap<>();
    for (Map<String, Object> row : reader.scan(control)) {
      finalRows.put(
          (String) row.get(ControlTable.TABLE_NAME), row.get(ControlTable.FINALIZED_UNTIL));
    }
    Map<String, Object> expected = new TreeMap<>();
    for (int w = 0; w < WRITERS; w++) {
      expected.put("target-" + w, finalVerdict);
    }
    assertEquals(expected, finalRows);
    // ... and across every version of the log, no target's verdict ever went back or vanished.
    long latest = reader.version(control);
    Map<String, LocalDateTime> seen = new HashMap<>();
    int rewrites = 0;
    for (long v = 0; v <= latest; v++) {
      Map<String, LocalDateTime> atVersion = new HashMap<>();
      try (var rows = reader.scanAtVersion(control, v, null)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          atVersion.put(
              (String) row.get(ControlTable.TABLE_NAME),
              (LocalDateTime) row.get(ControlTable.FINALIZED_UNTIL));
        }
      }
      for (Map.Entry<String, LocalDateTime> before : seen.entrySet()) {
        LocalDateTime now = atVersion.get(before.getKey());
        assertTrue(
            now != null && !now.isBefore(before.getValue()),
            "version "
                + v
                + ": "
                + before.getKey()
                + " went from "
                + before.getValue()
                + " to "
                + now);
      }
      if (!atVersion.equals(seen)) {
        rewrites++;
      }
      seen = atVersion;
    }
    // One rewrite per advance of each target: none was overwritten by another writer's.
    assertEquals(WRITERS * ADVANCES, rewrites);
  }
}
