package org.lakecdc.io.mssqlcdc.read;

import java.util.Locale;
import java.util.Objects;

/**
 * What the change read does when a batch's LSN range holds DDL on the table ({@code
 * sys.sp_cdc_get_ddl_history}, docs/options.md). Checked before any row of the batch is read; a
 * failing batch emits nothing.
 */
public enum SchemaChangePolicy {
  /**
   * The default: re-read the captured columns of the batch's capture instances and fail with {@link
   * org.lakecdc.io.mssqlcdc.client.SchemaChangedError} only when a captured column the query reads
   * has a new type its expected type does not hold ({@code ALTER COLUMN} to a wider or other type);
   * any other DDL ({@code ADD}, {@code DROP COLUMN}, constraints) goes on with a warning.
   */
  CLASSIFY,

  /**
   * Any DDL in the batch's range fails the read with {@link
   * org.lakecdc.io.mssqlcdc.client.SchemaChangedError} naming the first DDL's LSN and command; the
   * replay holds the same DDL, so the user restarts once with {@link #CLASSIFY} after looking.
   */
  FAIL;

  /**
   * The policy named by {@code text}: {@code classify} or {@code fail}, ignoring case and
   * surrounding blanks.
   *
   * @param text the option value
   * @return the policy
   * @throws IllegalArgumentException for any other value: {@code schemaChangePolicy must be
   *     'classify' or 'fail', not '<text>'}
   */
  public static SchemaChangePolicy parse(String text) {
    Objects.requireNonNull(text, "schemaChangePolicy");
    switch (text.strip().toLowerCase(Locale.ROOT)) {
      case "classify":
        return CLASSIFY;
      case "fail":
        return FAIL;
      default:
        throw new IllegalArgumentException(
            "schemaChangePolicy must be 'classify' or 'fail', not '"
                + text.replaceAll("\\p{Cntrl}", "?")
                + "'");
    }
  }

  /** The option value: {@code classify} or {@code fail}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
