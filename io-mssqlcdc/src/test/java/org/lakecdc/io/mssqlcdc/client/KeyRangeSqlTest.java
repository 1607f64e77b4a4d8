package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * docs/architecture.md "Data flow": seekable, disjoint key-range pieces with bounds cast to
 * declared types.
 */
class KeyRangeSqlTest {
  static final KeyRangeSql.KeyColumn A = KeyRangeSql.KeyColumn.of("a", "int", 4, 10, 0, null);
  static final KeyRangeSql.KeyColumn B =
      KeyRangeSql.KeyColumn.of("b", "varchar", 20, 0, 0, "Latin1_General_CI_AS");

  static List<KeyRangeSql.Piece> pieces(
      List<KeyRangeSql.KeyColumn> keys, List<Object> lower, List<Object> upper) {
    return KeyRangeSql.pieces(keys, Optional.ofNullable(lower), Optional.ofNullable(upper));
  }

  static KeyRangeSql.Piece piece(String where, String... parameters) {
    return new KeyRangeSql.Piece(where, List.of(parameters));
  }

  static final String CAST_B = "CAST(? COLLATE Latin1_General_CI_AS AS varchar(20))";

  @Test
  void cutsACompositeRangeIntoThreeSeekablePieces() {
    assertEquals(
        List.of(
            piece(
                "[a] = CAST(? AS int) AND [b] >= "
                    + CAST_B
                    + " AND ((([a] < CAST(? AS int) OR [a]"
                    + " IS NULL)) OR ([a] = CAST(? AS int) AND ([b] < "
                    + CAST_B
                    + " OR [b] IS"
                    + " NULL)))",
                "1",
                "x",
                "5",
                "5",
                "v"),
            piece("[a] > CAST(? AS int) AND ([a] < CAST(? AS int) OR [a] IS NULL)", "1", "5"),
            piece(
                "[a] = CAST(? AS int) AND ([b] < "
                    + CAST_B
                    + " OR [b] IS NULL) AND [a] > CAST(?"
                    + " AS int)",
                "5",
                "v",
                "1")),
        pieces(List.of(A, B), List.of(1, "x"), List.of(5, "v")));
  }

  @Test
  void usesOnePieceForASingleColumnKey() {
    assertEquals(
        List.of(piece("[a] >= CAST(? AS int) AND ([a] < CAST(? AS int) OR [a] IS NULL)", "1", "5")),
        pieces(List.of(A), List.of(1), List.of(5)));
  }

  @Test
  void keepsEqualLeadingValuesAsEqualities() {
    assertEquals(
        List.of(
            piece(
                "[a] = CAST(? AS int) AND [b] >= "
                    + CAST_B
                    + " AND ([b] < "
                    + CAST_B
                    + " OR [b]"
                    + " IS NULL)",
                "3",
                "m",
                "t")),
        pieces(List.of(A, B), List.of(3, "m"), List.of(3, "t")));
  }

  @Test
  void takesNullKeysIntoAnOpenLowerBound() {
    assertEquals(
        List.of(
            piece("([a] < CAST(? AS int) OR [a] IS NULL)", "5"),
            piece("[a] = CAST(? AS int) AND ([b] < " + CAST_B + " OR [b] IS NULL)", "5", "v")),
        pieces(List.of(A, B), null, List.of(5, "v")));
  }

  @Test
  void readsToTheEndForAnOpenUpperBound() {
    assertEquals(
        List.of(
            piece("[a] = CAST(? AS int) AND [b] >= " + CAST_B, "5", "v"),
            piece("[a] > CAST(? AS int)", "5")),
        pieces(List.of(A, B), List.of(5, "v"), null));
  }

  @Test
  void treatsNullBoundValuesAsTheSmallest() {
    // lower (NULL, NULL): >= NULL always holds, > NULL is IS NOT NULL.
    assertEquals(
        List.of(piece("[a] IS NULL"), piece("[a] IS NOT NULL")),
        pieces(List.of(A, B), Arrays.asList(null, null), null));
    // upper (NULL): nothing is below it.
    assertEquals(List.of(), pieces(List.of(A), null, Arrays.asList((Object) null)));
    assertEquals(List.of(piece("")), pieces(List.of(A), Arrays.asList((Object) null), null));
  }

  @Test
  void readsNothingForEqualBoundsAndEverythingWithoutBounds() {
    assertEquals(List.of(), pieces(List.of(A, B), List.of(5, "v"), List.of(5, "v")));
    assertEquals(List.of(piece("")), pieces(List.of(A), null, null));
    assertThrows(IllegalArgumentException.class, () -> pieces(List.of(A, B), List.of(5), null));
  }

  @Test
  void castsBoundsToTheDeclaredTypeAsText() {
    KeyRangeSql.KeyColumn money = KeyRangeSql.KeyColumn.of("m", "decimal", 9, 18, 2, null);
    assertEquals("CAST(? AS decimal(18,2))", money.cast());
    assertEquals("10.50", money.text(new BigDecimal("10.50")));
    assertEquals("100", money.text(new BigDecimal("1E+2")));
    KeyRangeSql.KeyColumn bin = KeyRangeSql.KeyColumn.of("h", "varbinary", 16, 0, 0, null);
    assertEquals("CONVERT(varbinary(16), ?, 1)", bin.cast());
    assertEquals("0x00FF10", bin.text(new byte[] {0, -1, 16}));
    KeyRangeSql.KeyColumn name =
        KeyRangeSql.KeyColumn.of("n", "nvarchar", 40, 0, 0, "Latin1_General_100_CS_AS");
    assertEquals("CAST(? COLLATE Latin1_General_100_CS_AS AS nvarchar(20))", name.cast());
    assertEquals(
        "CAST(? COLLATE Latin1_General_CI_AS AS varchar(max))",
        KeyRangeSql.KeyColumn.of("t", "varchar", -1, 0, 0, "Latin1_General_CI_AS").cast());
    KeyRangeSql.KeyColumn dt2 = KeyRangeSql.KeyColumn.of("d", "datetime2", 8, 27, 7, null);
    assertEquals("CAST(? AS datetime2(7))", dt2.cast());
    assertEquals(
        "2026-09-28T13:50:01.1234567",
        dt2.text(LocalDateTime.parse("2026-09-28T13:50:01.1234567")));
    KeyRangeSql.KeyColumn dt = KeyRangeSql.KeyColumn.of("d", "datetime", 8, 23, 3, null);
    assertEquals("CAST(? AS datetime)", dt.cast());
    assertEquals(
        "2026-09-28T13:50:01.997", dt.text(LocalDateTime.parse("2026-09-28T13:50:01.997")));
    KeyRangeSql.KeyColumn dto = KeyRangeSql.KeyColumn.of("o", "datetimeoffset", 10, 34, 7, null);
    assertEquals(
        "2026-09-28T16:50:01.1234567+00:00",
        dto.text(Instant.parse("2026-09-28T16:50:01.1234567Z")));
    assertEquals(
        "2026-09-28",
        KeyRangeSql.KeyColumn.of("d", "date", 3, 10, 0, null).text(LocalDate.parse("2026-09-28")));
    assertEquals("1", KeyRangeSql.KeyColumn.of("f", "bit", 1, 1, 0, null).text(true));
  }

  @Test
  void refusesKeysThatBoundsCannotBeCastTo() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> KeyRangeSql.KeyColumn.of("g", "geography", -1, 0, 0, null));
    assertEquals(
        "Key column 'g' has type geography, which key bounds cannot be cast to", e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> KeyRangeSql.KeyColumn.of("s", "varchar", 10, 0, 0, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> KeyRangeSql.KeyColumn.of("s", "varchar", 10, 0, 0, "Greek_CI_AS\n"));
    assertThrows(
        IllegalArgumentException.class,
        () -> KeyRangeSql.KeyColumn.of("a]; --", "int", 4, 10, 0, null));
  }
}
