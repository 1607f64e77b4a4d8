package org.lakecdc.pipelines.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.ChangeQuery;
import org.lakecdc.mssqlcdc.client.ChangeRow;
import org.lakecdc.mssqlcdc.client.CloseableIterator;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/** The demo database: TPC-H rows loaded before CDC, then a seeded change history. */
class DemoDatabaseTest {
  @TempDir Path dir;

  @Test
  void buildsOnceWithTpchRowsAndAHistoryAcrossTheFallBackHour() {
    DemoDatabase.Summary built = DemoDatabase.ensure(dir, 0.001, 600);
    assertTrue(built.created());
    assertEquals(1500, built.orders());
    assertEquals(6005, built.lineItems());
    assertEquals(300, built.transactions(), "the first half of the history");

    DemoDatabase.Summary again = DemoDatabase.ensure(dir, 0.001, 600);
    assertFalse(again.created());
    assertEquals(300, DemoDatabase.continueHistory(dir, 600), "the second half, once");
    assertEquals(0, DemoDatabase.continueHistory(dir, 600));

    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      List<Instant> commitTimes = new ArrayList<>();
      Lsn last = client.minLsn(DemoDatabase.ORDERS_CI).decrement();
      while (true) {
        var next = client.nthCommitAfter(last, 1);
        if (next.isEmpty()) {
          break;
        }
        commitTimes.add(next.get().commitTime());
        last = next.get().lsn();
      }
      for (int i = 1; i < commitTimes.size(); i++) {
        assertFalse(
            commitTimes.get(i).isBefore(commitTimes.get(i - 1)),
            "UTC commit times never go backwards, even across the repeated hour");
      }
      assertTrue(commitTimes.get(0).isBefore(Instant.parse("2026-11-01T05:00:00Z")));
      assertTrue(
          commitTimes.get(commitTimes.size() - 1).isAfter(Instant.parse("2026-11-01T07:00:00Z")),
          "the history runs past the fall-back (06:00 UTC)");

      List<String> operations = new ArrayList<>();
      Commit end = client.lastCommitAtOrBefore(client.maxLsn().orElseThrow()).orElseThrow();
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(
              new ChangeQuery(
                  DemoDatabase.ORDERS_CI, Lsn.ZERO, end.lsn(), List.of("o_orderkey"), true))) {
        rows.forEachRemaining(r -> operations.add(String.valueOf(r.operation())));
      }
      assertTrue(operations.containsAll(List.of("1", "2", "3", "4")), "every operation occurs");
      assertEquals(
          LocalDateTime.of(2026, 11, 1, 8, 15, 27),
          LocalDateTime.ofInstant(end.commitTime(), ZoneOffset.UTC).withNano(0),
          "the seeded history is the same on every machine");
    }
  }

  @Test
  void neverBuildsOverADirectoryThatIsNotEmptyAndNeverWritesWhenReading() throws Exception {
    java.nio.file.Files.writeString(dir.resolve("notes.txt"), "mine");
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> DemoDatabase.ensure(dir, 0.001, 10));
    assertTrue(e.getMessage().contains("is neither empty nor a CDC database"), e.getMessage());
    assertEquals(List.of("notes.txt"), List.of(dir.toFile().list()));

    Path demo = dir.resolve("demo");
    DemoDatabase.ensure(demo, 0.001, 10);
    Path server = demo.resolve("server.json");
    String before = java.nio.file.Files.readString(server);
    long modified = java.nio.file.Files.getLastModifiedTime(server).toMillis();
    assertFalse(DemoDatabase.ensure(demo, 0.001, 10).created());
    assertEquals(before, java.nio.file.Files.readString(server));
    assertEquals(modified, java.nio.file.Files.getLastModifiedTime(server).toMillis());
    assertEquals(
        "rw-r--r--",
        java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(server)));
  }
}
