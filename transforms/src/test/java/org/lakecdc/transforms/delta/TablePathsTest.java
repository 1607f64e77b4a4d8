package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** One table, one name, however it is spelled (docs/tables.md "Whose position is it"). */
class TablePathsTest {
  private static final String CWD = Path.of("").toAbsolutePath().toString();

  @Test
  void relativeAbsoluteAndFileUriSpellingsOfOneTableAreOneName() {
    String expected = CWD + "/lakecdc-demo/delta/dbo_orders";
    assertEquals(expected, TablePaths.normalize("lakecdc-demo/delta/dbo_orders"));
    assertEquals(expected, TablePaths.normalize("./lakecdc-demo/delta/dbo_orders/"));
    assertEquals(expected, TablePaths.normalize(CWD + "/lakecdc-demo/x/../delta/dbo_orders"));
    assertEquals(expected, TablePaths.normalize("file:" + expected));
    assertEquals(expected, TablePaths.normalize("file://" + expected));
    assertEquals(expected, TablePaths.normalize("file://localhost" + expected + "/"));
    assertEquals(expected, TablePaths.normalize("  " + expected + "  "));
  }

  @Test
  void otherSchemesKeepTheirAuthorityAndLoseATrailingSlash() {
    assertEquals(
        "s3a://bucket/lake/dbo_orders", TablePaths.normalize("S3A://bucket/lake/dbo_orders/"));
    assertEquals(
        "s3a://bucket/lake/dbo_orders",
        TablePaths.normalize("s3a://bucket/lake/./x/../dbo_orders"));
    assertEquals(
        "abfss://c@acct.dfs.core.windows.net/lake/t",
        TablePaths.normalize("abfss://c@acct.dfs.core.windows.net/lake/t"));
  }

  @Test
  void emptyAndRemoteFileUrisAreRefused() {
    assertEquals(
        "Not a table path or URI: it is empty",
        assertThrows(IllegalArgumentException.class, () -> TablePaths.normalize(" ")).getMessage());
    assertEquals(
        "Not a table path or URI: 'file://server/share/t' (a file: URI names no remote host)",
        assertThrows(
                IllegalArgumentException.class, () -> TablePaths.normalize("file://server/share/t"))
            .getMessage());
  }
}
