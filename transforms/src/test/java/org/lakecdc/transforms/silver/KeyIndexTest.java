package org.lakecdc.transforms.silver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KeyIndexTest {
  private static Object key(Object... values) {
    return KeyIndex.key(values, values.length);
  }

  @Test
  void keysCompareNullSafeAndByValue() {
    assertEquals(key((Object) null), key((Object) null));
    assertEquals(KeyIndex.NULL, key((Object) null));
    assertNotEquals(key((Object) null), key(0L));
    assertEquals(key(new BigDecimal("1.50")), key(new BigDecimal("1.5")));
    assertEquals(key(new BigDecimal("0.00")), key(BigDecimal.ZERO));
    assertEquals(key(new byte[] {1, 2}), key(new byte[] {1, 2}));
    assertNotEquals(key(new byte[] {1, 2}), key(new byte[] {1, 3}));
    assertEquals(key("eu", null), key("eu", null));
    assertNotEquals(key("eu", null), key(null, "eu"));
    assertEquals(List.of("eu", KeyIndex.NULL), key("eu", null));
  }

  @Test
  void orderPutsNullFirstAndComparesBinaryUnsigned() {
    List<Object> keys = new ArrayList<>(List.of(key(3L), key((Object) null), key(-1L), key(2L)));
    keys.sort(KeyIndex.ORDER);
    assertEquals(List.of(key((Object) null), key(-1L), key(2L), key(3L)), keys);
    assertTrue(KeyIndex.ORDER.compare(key(new byte[] {(byte) 0xFF}), key(new byte[] {1})) > 0);
    assertTrue(KeyIndex.ORDER.compare(key("a", null), key("a", 1)) < 0);
    assertTrue(KeyIndex.ORDER.compare(key("a", 2), key("b", 1)) < 0);
  }

  @Test
  void primitiveAndObjectEntriesMatchAMapModelThroughPutsRemovesAndGrowth() {
    KeyIndex index = new KeyIndex("t", 1);
    Map<Object, KeyIndex.Location> model = new HashMap<>();
    Random random = new Random(11);
    List<String> files = List.of("a.parquet", "b.parquet", "c.parquet");
    for (int step = 0; step < 60_000; step++) {
      Object key;
      int kind = random.nextInt(10);
      if (kind < 7) {
        key = (long) random.nextInt(5000) - 2500;
      } else if (kind < 8) {
        key = "s" + random.nextInt(300);
      } else if (kind < 9) {
        key = key("r" + random.nextInt(10), random.nextInt(20));
      } else {
        key = KeyIndex.NULL;
      }
      if (random.nextInt(3) == 0) {
        index.remove(key);
        model.remove(key);
      } else {
        String file = files.get(random.nextInt(files.size()));
        long position = random.nextInt(100) == 0 ? (1L << 33) + step : step;
        String lsn =
            random.nextInt(50) == 0
                ? "lsn-" + step
                : String.format("0x%020X", (long) step * 1_000_003L + 0xFFFF);
        KeyIndex.Location previous = model.get(key);
        if (previous == null || previous.startLsn().compareTo(lsn) <= 0) {
          model.put(key, new KeyIndex.Location(index.fileId(file), position, lsn));
        }
        index.put(key, file, position, lsn);
      }
      if (step % 997 == 0) {
        assertEquals(model.size(), index.size());
      }
    }
    assertEquals(model.size(), index.size());
    for (Map.Entry<Object, KeyIndex.Location> entry : model.entrySet()) {
      assertEquals(entry.getValue(), index.get(entry.getKey()), "key " + entry.getKey());
    }
    for (long absent = 3000; absent < 3100; absent++) {
      assertNull(index.get(absent));
    }
  }

  @Test
  void aKeyKeepsTheRowWithTheNewerLsn() {
    KeyIndex index = new KeyIndex("t", 1);
    index.put(5L, "a", 1, "0x0000000000000000000B");
    index.put(5L, "b", 2, "0x0000000000000000000A");
    assertEquals(new KeyIndex.Location(0, 1, "0x0000000000000000000B"), index.get(5L));
    index.put(5L, "b", 2, "0x0000000000000000000C");
    assertEquals(new KeyIndex.Location(1, 2, "0x0000000000000000000C"), index.get(5L));
    assertEquals(1, index.size());
  }

  @Test
  void canonicalLsnsAreTwentyUpperCaseHexDigits() {
    assertTrue(KeyIndex.isCanonicalLsn("0x0000002A000000F00003"));
    assertFalse(KeyIndex.isCanonicalLsn("0x0000002a000000f00003"));
    assertFalse(KeyIndex.isCanonicalLsn("0x0000002A000000F0003"));
    assertFalse(KeyIndex.isCanonicalLsn("1x0000002A000000F00003"));
    KeyIndex index = new KeyIndex("t", 1);
    index.put(1, "f", 0, "0xFFFFFFFFFFFFFFFFFFFF");
    index.put((short) 2, "f", 1, "0x00000000000000000000");
    assertEquals("0xFFFFFFFFFFFFFFFFFFFF", index.get(1).startLsn());
    assertEquals("0x00000000000000000000", index.get((short) 2).startLsn());
    assertEquals(
        Arrays.asList(0, 1L), Arrays.asList(index.get(1).file(), index.get((short) 2).position()));
  }
}
