package org.lakecdc.io.mssqlcdc.lsn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** LSN text form, order and arithmetic (docs/scenarios.md C265–C267, C271). */
class LsnTest {

  @Test
  void normalisesLowerCaseTextToCanonicalForm() {
    assertEquals("0x0000002A000001F00003", Lsn.parse("0x0000002a000001f00003").toString());
  }

  @Test
  void leftPadsShortText() {
    assertEquals("0x" + "0".repeat(18) + "2A", Lsn.parse("2A").toString());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0x0000002A000001F00003",
        "0X0000002A000001F00003",
        "0000002a000001f00003",
        "0x2A000001F00003",
        "  2a000001F00003\t",
        "2A000001F00003"
      })
  void acceptsEverySpellingOfOneLsn(String spelling) {
    assertEquals("0x0000002A000001F00003", Lsn.parse(spelling).toString());
  }

  @Test
  void canonicalParsingTakesExactlyTwentyDigitsAfter0x() {
    assertEquals("0x0000002A000001F00003", Lsn.parseCanonical("0x0000002a000001f00003").toString());
    assertEquals("0x0000002A000001F00003", Lsn.parseCanonical("0X0000002A000001F00003").toString());
    for (String text :
        new String[] {
          "0x0000",
          "0x2A000001F00003",
          "0000002A000001F00003",
          " 0x0000002A000001F00003",
          "0x0000002A000001F000031",
          "0x0000002A000001F0000G",
          ""
        }) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Lsn.parseCanonical(text));
      assertEquals(
          "Invalid LSN: '"
              + text
              + "' (expected 0x followed by exactly 20 hexadecimal digits, e.g."
              + " 0x0000002A000001000001)",
          e.getMessage());
    }
    assertEquals(
        "Invalid LSN: null (expected 0x followed by exactly 20 hexadecimal digits, e.g."
            + " 0x0000002A000001000001)",
        assertThrows(IllegalArgumentException.class, () -> Lsn.parseCanonical(null)).getMessage());
  }

  @Test
  void rawBytesGiveTheSameText() {
    byte[] raw = {0, 0, 0, 0x2A, 0, 0, 0x01, (byte) 0xF0, 0, 0x03};
    assertEquals("0x0000002A000001F00003", Lsn.ofBytes(raw).toString());
    assertArrayEquals(raw, Lsn.ofBytes(raw).toBytes());
  }

  @Test
  void rejectsInvalidTextNamingTheValue() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Lsn.parse("0xZZ"));
    assertTrue(e.getMessage().startsWith("Invalid LSN: '0xZZ'"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Lsn.parse(""));
    assertThrows(IllegalArgumentException.class, () -> Lsn.parse("0x"));
    assertThrows(IllegalArgumentException.class, () -> Lsn.parse("0x" + "1".repeat(21)));
    assertThrows(IllegalArgumentException.class, () -> Lsn.parse("0x12 34"));
    assertThrows(IllegalArgumentException.class, () -> Lsn.parse(null));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 9, 11, 20})
  void rejectsByteArraysOfOtherLengths(int length) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Lsn.ofBytes(new byte[length]));
    assertEquals("LSN must be 10 bytes, got " + length, e.getMessage());
  }

  @Test
  void rejectsIntegersOutsideEightyBits() {
    assertThrows(IllegalArgumentException.class, () -> Lsn.fromBigInteger(BigInteger.valueOf(-1)));
    assertThrows(
        IllegalArgumentException.class, () -> Lsn.fromBigInteger(BigInteger.ONE.shiftLeft(80)));
    assertEquals(
        "0xFFFFFFFFFFFFFFFFFFFF",
        Lsn.fromBigInteger(BigInteger.ONE.shiftLeft(80).subtract(BigInteger.ONE)).toString());
  }

  @Test
  void copiesBytesInAndOut() {
    byte[] raw = new byte[10];
    Lsn lsn = Lsn.ofBytes(raw);
    raw[0] = 1;
    lsn.toBytes()[1] = 1;
    assertEquals(Lsn.ZERO, lsn);
  }

  /** Every byte position holds a value >= 0x80 in one of the pair: a signed compare would fail. */
  @Test
  void comparesUnsignedInEveryBytePosition() {
    for (int position = 0; position < Lsn.BYTES; position++) {
      byte[] low = new byte[Lsn.BYTES];
      byte[] high = new byte[Lsn.BYTES];
      low[position] = 0x7F;
      high[position] = (byte) 0x80;
      assertTrue(Lsn.ofBytes(low).compareTo(Lsn.ofBytes(high)) < 0, "position " + position);
      high[position] = (byte) 0xFF;
      low[position] = (byte) 0xFE;
      assertTrue(Lsn.ofBytes(low).isBefore(Lsn.ofBytes(high)), "position " + position);
    }
  }

  @Test
  void textOfEveryByteValueAtEveryPositionIsUpperCaseHexAndMadeOnce() {
    java.util.HexFormat hex = java.util.HexFormat.of().withUpperCase();
    for (int position = 0; position < Lsn.BYTES; position++) {
      for (int value = 0; value < 256; value++) {
        byte[] raw = new byte[Lsn.BYTES];
        raw[position] = (byte) value;
        Lsn lsn = Lsn.ofBytes(raw);
        assertEquals("0x" + hex.formatHex(raw), lsn.toString());
        assertSame(lsn.toString(), lsn.toString());
      }
    }
  }

  @Test
  void textOrderEqualsLsnOrderAndIntegerRoundTrips() {
    Random random = new Random(42);
    List<Lsn> lsns = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      byte[] raw = new byte[Lsn.BYTES];
      random.nextBytes(raw);
      Lsn lsn = Lsn.ofBytes(raw);
      lsns.add(lsn);
      assertEquals(lsn, Lsn.fromBigInteger(lsn.toBigInteger()));
      assertTrue(lsn.toString().matches("^0x[0-9A-F]{20}$"));
      assertEquals(lsn, Lsn.parse(lsn.toString()));
      assertEquals(lsn, Lsn.parse(lsn.toString().toLowerCase()));
    }
    for (Lsn a : lsns.subList(0, 50)) {
      for (Lsn b : lsns) {
        assertEquals(
            Integer.signum(a.toBigInteger().compareTo(b.toBigInteger())),
            Integer.signum(a.compareTo(b)));
        assertEquals(
            Integer.signum(a.toString().compareTo(b.toString())), Integer.signum(a.compareTo(b)));
      }
    }
    List<Lsn> sorted = new ArrayList<>(lsns);
    Collections.sort(sorted);
    List<String> texts = new ArrayList<>(sorted.stream().map(Lsn::toString).toList());
    List<String> sortedTexts = new ArrayList<>(texts);
    Collections.sort(sortedTexts);
    assertEquals(sortedTexts, texts);
  }

  @Test
  void incrementAndDecrementAreNeighboursWithCarry() {
    Lsn first = Lsn.parse("0x0000002A000001000001");
    assertEquals("0x0000002A000001000002", first.increment().toString());
    assertEquals("0x0000002A000001000000", first.decrement().toString());
    assertEquals(first, first.increment().decrement());
    assertEquals(
        "0x0000002A000002000000", Lsn.parse("0x0000002A000001FFFFFF").increment().toString());
    assertEquals(
        "0x0000002A000001FFFFFF", Lsn.parse("0x0000002A000002000000").decrement().toString());
    assertEquals(
        "0x81000000000000000000", Lsn.parse("0x80FFFFFFFFFFFFFFFFFF").increment().toString());
    assertTrue(first.increment().isAfter(first));
  }

  @Test
  void decrementClampsAtZeroAndIncrementRefusesTheLargest() {
    assertEquals(Lsn.ZERO, Lsn.ZERO.decrement());
    assertTrue(Lsn.ZERO.isZero());
    IllegalStateException e = assertThrows(IllegalStateException.class, Lsn.MAX::increment);
    assertTrue(e.getMessage().contains("0xFFFFFFFFFFFFFFFFFFFF"));
  }

  @Test
  void coderRoundTripsAndSortsBytesInLsnOrder() throws Exception {
    Lsn high = Lsn.parse("0xFF80FF80FF80FF80FF80");
    Lsn low = Lsn.parse("0x7F80FF80FF80FF80FF80");
    byte[] highBytes = CoderUtils.encodeToByteArray(LsnCoder.of(), high);
    assertEquals(10, highBytes.length);
    assertEquals(high, CoderUtils.decodeFromByteArray(LsnCoder.of(), highBytes));
    byte[] lowBytes = CoderUtils.encodeToByteArray(LsnCoder.of(), low);
    assertTrue(java.util.Arrays.compareUnsigned(lowBytes, highBytes) < 0);
    LsnRange range = new LsnRange(low, high);
    assertEquals(
        range,
        CoderUtils.decodeFromByteArray(
            LsnRangeCoder.of(), CoderUtils.encodeToByteArray(LsnRangeCoder.of(), range)));
    LsnRange numbered = range.withFirstBatch(1_234_567_890_123L);
    assertEquals(
        numbered,
        CoderUtils.decodeFromByteArray(
            LsnRangeCoder.of(), CoderUtils.encodeToByteArray(LsnRangeCoder.of(), numbered)));
  }
}
