package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.lakecdc.transforms.silver.SilverImage;

/** The silver benchmark's rows and waves: their sizes, keys, LSNs and determinism. */
class SilverWavesTest {
  private static int key(SilverImage image) {
    return image.row().getInt32("o_orderkey");
  }

  @Test
  void initialRowsHaveDenseKeysInOrderAndTheTablesLsn() {
    Iterator<Row> rows = new SilverWaves(5, 2, 1).initialRows();
    List<Integer> keys = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      keys.add(r.getInt32("o_orderkey"));
      assertThat(r.getString("_start_lsn"), is("0x0000002A000000010001"));
      assertThat(r.getValue("_commit_ts"), is(LocalDateTime.of(2026, 1, 1, 0, 0)));
    }
    assertThat(keys, is(List.of(1, 2, 3, 4, 5)));
  }

  @Test
  void aWaveUpdatesAndDeletesDistinctLiveKeysAndInsertsNewOnes() {
    SilverWaves waves = new SilverWaves(1000, 100, 7);
    Set<Integer> live = new HashSet<>();
    for (int k = 1; k <= 1000; k++) {
      live.add(k);
    }
    for (int w = 1; w <= 3; w++) {
      SilverWaves.Wave wave = waves.next();
      assertThat(wave.number(), is(w));
      assertThat(List.of(wave.updates(), wave.deletes(), wave.inserts()), is(List.of(80, 9, 11)));
      assertThat(wave.images().size(), is(100));
      Set<Integer> seen = new HashSet<>();
      int updates = 0;
      int deletes = 0;
      int inserts = 0;
      for (SilverImage image : wave.images()) {
        int key = key(image);
        assertThat("key " + key + " twice in wave " + w, seen.add(key), is(true));
        assertThat(image.row().getString("_start_lsn"), is(SilverWaves.lsn(w)));
        if (image.delete()) {
          assertThat(live.contains(key), is(true));
          assertThat(image.row().getString("o_comment"), is((String) null));
          deletes++;
        } else if (live.contains(key)) {
          assertThat(image.row().getString("o_comment").startsWith("wave " + w + ": "), is(true));
          updates++;
        } else {
          assertThat(key, is(1000 + (w - 1) * 11 + inserts + 1));
          inserts++;
        }
      }
      assertThat(List.of(updates, deletes, inserts), is(List.of(80, 9, 11)));
      for (SilverImage image : wave.images()) {
        if (image.delete()) {
          live.remove(key(image));
        } else {
          live.add(key(image));
        }
      }
      assertThat(waves.liveRows(), is((long) live.size()));
    }
    assertThat(waves.liveRows(), is(1006L));
  }

  @Test
  void theSameSeedGivesTheSameWavesAndLsnsGrowAsText() {
    SilverWaves a = new SilverWaves(500, 50, 3);
    SilverWaves b = new SilverWaves(500, 50, 3);
    SilverWaves other = new SilverWaves(500, 50, 4);
    List<Integer> aKeys = new ArrayList<>();
    List<Integer> otherKeys = new ArrayList<>();
    for (int w = 1; w <= 2; w++) {
      SilverWaves.Wave wa = a.next();
      SilverWaves.Wave wb = b.next();
      assertThat(wa.images(), is(wb.images()));
      wa.images().forEach(i -> aKeys.add(key(i)));
      other.next().images().forEach(i -> otherKeys.add(key(i)));
      assertThat(SilverWaves.lsn(w).compareTo(SilverWaves.lsn(w - 1)) > 0, is(true));
    }
    assertThat(aKeys.equals(otherKeys), is(false));
  }
}
