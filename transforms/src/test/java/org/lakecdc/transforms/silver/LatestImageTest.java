package org.lakecdc.transforms.silver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * C183: any order of the same changes gives each key its latest image. jqwik is not on the
 * classpath: every ordering of small sets is checked exhaustively, and seeded shuffles of the full
 * set of rank tuples.
 */
class LatestImageTest {
  private static final Integer[] NULLABLE = {null, 1, 2};

  /** Every (start_lsn ∈ {16,32}, command_id, seqval ∈ {NULL,1,2}, operation 0..4) row. */
  private static List<Map<String, Object>> allRows() {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (long lsn : new long[] {16, 32}) {
      for (Integer command : NULLABLE) {
        for (Integer seq : NULLABLE) {
          for (int op = 0; op <= 4; op++) {
            Map<String, Object> row = new HashMap<>();
            row.put("_start_lsn", BronzeLog.lsn(lsn));
            row.put("_command_id", command);
            row.put("_seqval", seq == null ? null : BronzeLog.lsn(seq));
            row.put("_operation", op);
            rows.add(row);
          }
        }
      }
    }
    return rows;
  }

  /** The expected rank, computed independently: a number, NULL lowest. */
  private static long rank(Map<String, Object> row, boolean withCommandId) {
    long lsn = Long.parseLong(((String) row.get("_start_lsn")).substring(2), 16);
    Integer command = (Integer) row.get("_command_id");
    String seq = (String) row.get("_seqval");
    long seqRank = seq == null ? 0 : Long.parseLong(seq.substring(2), 16) + 1;
    long commandRank = withCommandId ? (command == null ? 0 : command + 1) : 0;
    return ((lsn * 10 + commandRank) * 10 + seqRank) * 10 + (Integer) row.get("_operation");
  }

  /** The streaming reduction BronzeWaves uses (first of equal rank kept). */
  private static Map<String, Object> latest(
      List<Map<String, Object>> rows, Comparator<Map<String, Object>> order) {
    Map<String, Object> best = null;
    for (Map<String, Object> row : rows) {
      best = best == null || order.compare(row, best) > 0 ? row : best;
    }
    return best;
  }

  private static void permutations(
      List<Map<String, Object>> items,
      int k,
      java.util.function.Consumer<List<Map<String, Object>>> each) {
    if (k == items.size()) {
      each.accept(items);
      return;
    }
    for (int i = k; i < items.size(); i++) {
      Collections.swap(items, k, i);
      permutations(items, k + 1, each);
      Collections.swap(items, k, i);
    }
  }

  @Test
  void c183EveryOrderingOfSmallSetsGivesTheMaximum() {
    for (boolean withCommandId : new boolean[] {true, false}) {
      Comparator<Map<String, Object>> order = LatestImage.order(withCommandId);
      List<Map<String, Object>> all = allRows();
      Random random = new Random(183);
      for (int sample = 0; sample < 40; sample++) {
        Collections.shuffle(all, random);
        // Six rows whose expected ranks differ (ties have no single answer to compare).
        List<Map<String, Object>> pick = new ArrayList<>();
        java.util.Set<Long> ranks = new java.util.HashSet<>();
        for (Map<String, Object> row : all) {
          if (pick.size() < 6 && ranks.add(rank(row, withCommandId))) {
            pick.add(row);
          }
        }
        long expected = pick.stream().mapToLong(r -> rank(r, withCommandId)).max().orElseThrow();
        int[] orderings = {0};
        final boolean with = withCommandId;
        permutations(
            new ArrayList<>(pick),
            0,
            perm -> {
              orderings[0]++;
              assertEquals(expected, rank(latest(perm, order), with), perm.toString());
            });
        assertEquals(720, orderings[0]);
      }
    }
  }

  @Test
  void c183TheOrderIsTheRankTupleOnEveryPairAndShuffle() {
    for (boolean withCommandId : new boolean[] {true, false}) {
      Comparator<Map<String, Object>> order = LatestImage.order(withCommandId);
      List<Map<String, Object>> all = allRows();
      assertEquals(90, all.size());
      for (Map<String, Object> a : all) {
        for (Map<String, Object> b : all) {
          assertEquals(
              Long.signum(Long.compare(rank(a, withCommandId), rank(b, withCommandId))),
              Integer.signum(order.compare(a, b)),
              a + " vs " + b);
        }
      }
      long expected = all.stream().mapToLong(r -> rank(r, withCommandId)).max().orElseThrow();
      Random random = new Random(7);
      for (int i = 0; i < 500; i++) {
        Collections.shuffle(all, random);
        assertEquals(expected, rank(latest(all, order), withCommandId));
      }
    }
  }

  @Test
  void operationsOneAndThreeDelete() {
    assertFalse(LatestImage.deletes(0));
    assertTrue(LatestImage.deletes(1));
    assertFalse(LatestImage.deletes(2));
    assertTrue(LatestImage.deletes(3));
    assertFalse(LatestImage.deletes(4));
  }
}
