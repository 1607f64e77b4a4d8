package org.lakecdc.transforms.reconcile;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.reconcile.ChunkChecks.BronzeChunk;
import org.lakecdc.transforms.reconcile.ChunkChecks.FactsChunk;

/**
 * The chunk checks' table of cases (docs/scenarios.md C198): S = {@code 0x…10}, BELOW = {@code
 * 0x…05}, ABOVE = {@code 0x…20}; chunks 0 [open, 3), 1 [3, 6), 2 [6, open) with 2 flagged last;
 * bronze holds 3 rows per chunk, stamped ABOVE.
 */
class ChunkChecksTest {
  private static final Lsn S = Lsn.parse("0x00000000000000000010");
  private static final Lsn BELOW = Lsn.parse("0x00000000000000000005");
  private static final Lsn ABOVE = Lsn.parse("0x00000000000000000020");

  private static FactsChunk fact(int chunk, String lo, String hi, boolean last) {
    return new FactsChunk(chunk, lo, hi, last, 3, ABOVE);
  }

  private static List<FactsChunk> tiled() {
    return new ArrayList<>(
        List.of(fact(0, "null", "3", false), fact(1, "3", "6", false), fact(2, "6", "null", true)));
  }

  private static TreeMap<Integer, BronzeChunk> bronze(int chunks) {
    TreeMap<Integer, BronzeChunk> out = new TreeMap<>();
    for (int i = 0; i < chunks; i++) {
      out.put(i, new BronzeChunk(3, ABOVE));
    }
    return out;
  }

  /** "TYPE chunk lo hi detail" per failure. */
  private static List<String> check(
      List<FactsChunk> facts, TreeMap<Integer, BronzeChunk> bronze, boolean complete) {
    List<String> out = new ArrayList<>();
    for (ChunkChecks.Failure f : ChunkChecks.check(S, facts, bronze, complete)) {
      out.add(
          f.failureType() + " " + f.chunk() + " " + f.lo() + " " + f.hi() + " " + f.detailJson());
    }
    return out;
  }

  private static String detail(int chunk, String more) {
    return "{\"snapshot\":\"" + S + "\",\"chunk\":" + chunk + "," + more + "}";
  }

  private static String tiling(int chunk, @Nullable String lo, @Nullable String hi, String why) {
    return "CHUNK_TILING "
        + chunk
        + " "
        + lo
        + " "
        + hi
        + " "
        + detail(chunk, "\"problem\":\"" + why + "\"");
  }

  private static String rows(
      int chunk, @Nullable String lo, @Nullable String hi, String facts, long bronze) {
    return "CHUNK_ROWS "
        + chunk
        + " "
        + lo
        + " "
        + hi
        + " "
        + detail(chunk, "\"facts_rows\":" + facts + ",\"bronze_rows\":" + bronze);
  }

  @Test
  void c198ATiledSnapshotPassesOpenOrComplete() {
    assertEquals(List.of(), check(tiled(), bronze(3), true));
    assertEquals(List.of(), check(tiled().subList(0, 2), bronze(3), false));
    List<FactsChunk> unstamped = new ArrayList<>();
    for (FactsChunk f : tiled()) {
      unstamped.add(new FactsChunk(f.chunk(), f.loJson(), f.hiJson(), f.last(), 3, null));
    }
    TreeMap<Integer, BronzeChunk> bronzeUnstamped = new TreeMap<>();
    for (int i = 0; i < 3; i++) {
      bronzeUnstamped.put(i, new BronzeChunk(3, null));
    }
    assertEquals(List.of(), check(unstamped, bronzeUnstamped, true), "no stamps: taken as S");
  }

  @Test
  void c198AMissingOrDuplicatedChunkIsFound() {
    List<FactsChunk> missing = tiled();
    missing.remove(1);
    assertEquals(
        List.of(
            tiling(1, null, null, "no 'snapshot_chunk' facts row"), rows(1, null, null, "null", 3)),
        check(missing, bronze(3), true),
        "bronze's chunk 1 has no facts row either");
    List<FactsChunk> twice = tiled();
    twice.add(fact(1, "3", "6", false));
    assertEquals(
        List.of(tiling(1, "3", "6", "2 'snapshot_chunk' facts rows")),
        check(twice, bronze(3), true));
  }

  @Test
  void c198ChunksThatDoNotTileAreFound() {
    List<FactsChunk> closedBelow = tiled();
    closedBelow.set(0, fact(0, "0", "3", false));
    assertEquals(
        List.of(tiling(0, "0", "3", "the first chunk is not open below")),
        check(closedBelow, bronze(3), true));
    List<FactsChunk> overlap = tiled();
    overlap.set(1, fact(1, "2", "6", false));
    assertEquals(
        List.of(tiling(1, "2", "6", "it does not start where the one before ended")),
        check(overlap, bronze(3), true));
    List<FactsChunk> afterLast = tiled();
    afterLast.set(1, fact(1, "3", "6", true));
    assertEquals(
        List.of(tiling(2, "6", null, "it does not start where the one before ended")),
        check(afterLast, bronze(3), true));
    List<FactsChunk> unflagged = tiled();
    unflagged.set(2, fact(2, "6", "null", false));
    assertEquals(
        List.of(tiling(2, "6", null, "the last chunk is not the plan's final")),
        check(unflagged, bronze(3), true));
    assertEquals(List.of(), check(unflagged, bronze(3), false), "open: more chunks may come");
  }

  @Test
  void c198ChunkRowsAreComparedWithBronze() {
    TreeMap<Integer, BronzeChunk> extra = bronze(3);
    extra.put(3, new BronzeChunk(2, ABOVE));
    assertEquals(List.of(rows(3, null, null, "null", 2)), check(tiled(), extra, true));
    assertEquals(
        List.of(), check(tiled(), extra, false), "open: a chunk being written has no row yet");
    List<FactsChunk> counted = tiled();
    counted.set(1, new FactsChunk(1, "3", "6", false, 4, ABOVE));
    TreeMap<Integer, BronzeChunk> fewer = bronze(3);
    fewer.put(2, new BronzeChunk(1, ABOVE));
    assertEquals(
        List.of(rows(1, "3", "6", "4", 3), rows(2, "6", null, "3", 1)),
        check(counted, fewer, true));
    assertEquals(List.of(rows(2, "6", null, "3", 0)), check(tiled(), bronze(2), true));
  }

  @Test
  void c198StampsBelowSAreFound() {
    List<FactsChunk> early = tiled();
    early.set(0, new FactsChunk(0, "null", "3", false, 3, BELOW));
    assertEquals(
        List.of("CHUNK_STAMP 0 null 3 " + detail(0, "\"lsn\":\"" + BELOW + "\",\"in\":\"facts\"")),
        check(early, bronze(3), true));
    TreeMap<Integer, BronzeChunk> behind = bronze(3);
    behind.put(1, new BronzeChunk(3, BELOW));
    assertEquals(
        List.of("CHUNK_STAMP 1 3 6 " + detail(1, "\"lsn\":\"" + BELOW + "\",\"in\":\"bronze\"")),
        check(tiled(), behind, true));
  }
}
