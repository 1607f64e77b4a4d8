package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/** {@link Collation}: what a SQL Server collation name means to the fake, and how it compares. */
class CollationNamesTest {
  /** name, binary, case-sensitive, accent-sensitive. */
  @Test
  void theFlagsOfANameDecideTheComparison() {
    Object[][] names = {
      {"SQL_Latin1_General_CP1_CI_AS", false, false, true},
      {"Latin1_General_100_CS_AS_SC_UTF8", false, true, true},
      {"Latin1_General_CI_AI", false, false, false},
      {"Latin1_General_CS_AI", false, true, false},
      {"Japanese_XJIS_140_CI_AS_KS_WS_VSS", false, false, true},
      {"Latin1_General_BIN2", true, true, true},
      {"SQL_Latin1_General_CP850_BIN", true, true, true},
      {"latin1_general_100_bin2_utf8", true, true, true}
    };
    for (Object[] n : names) {
      Collation c = Collation.parse((String) n[0]);
      assertEquals(
          List.of(n[1], n[2], n[3]),
          List.of(c.binary(), c.caseSensitive(), c.accentSensitive()),
          (String) n[0]);
      assertEquals(n[0], c.name());
    }
    for (String bad : new String[] {"Latin1_General", "Latin1_General_CI", "Latin1_CI_CS_AS", ""}) {
      assertThrows(IllegalArgumentException.class, () -> Collation.parse(bad), bad);
    }
  }

  @Test
  void valuesCompareUnderTheFlagsWithTrailingSpacesIgnored() {
    Collation ciAs = Collation.parse("SQL_Latin1_General_CP1_CI_AS");
    assertEquals(0, ciAs.compare("Ab", "aB   "));
    assertEquals(-1, Integer.signum(ciAs.compare("e", "é")));
    assertNotEquals(0, ciAs.compare("a b", "ab"));
    Collation csAi = Collation.parse("Latin1_General_CS_AI");
    assertEquals(0, csAi.compare("é", "e"));
    assertEquals(1, Integer.signum(csAi.compare("É", "e")));
    Collation ciAi = Collation.parse("Latin1_General_CI_AI");
    assertEquals(0, ciAi.compare("É", "e "));
    // Spaces inside a value count under every collation ('a b' is not 'ab').
    assertNotEquals(0, ciAi.compare("a b", "ab"));
    assertNotEquals(0, ciAi.compare("a-b", "ab"));
    Collation bin2 = Collation.parse("Latin1_General_BIN2");
    assertEquals(-1, Integer.signum(bin2.compare("B", "a")));
    assertEquals(0, bin2.compare("a", "a  "));
  }

  @Test
  void onlyCharacterTypesHaveACollationAndTheirDefaultIsSqlServers() {
    assertSame(Collation.DEFAULT, Collation.of("k", SqlServerType.parse("nvarchar(10)"), null));
    assertEquals("SQL_Latin1_General_CP1_CI_AS", Collation.DEFAULT.name());
    assertNull(Collation.of("k", SqlServerType.parse("int"), null));
    assertThrows(
        IllegalArgumentException.class,
        () -> Collation.of("k", SqlServerType.parse("varbinary(4)"), "Latin1_General_BIN2"));
  }
}
