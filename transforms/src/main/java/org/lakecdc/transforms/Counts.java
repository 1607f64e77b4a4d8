package org.lakecdc.transforms;

import java.util.Locale;

/**
 * Counts for people to read: {@code 1 batch}, {@code 2 batches}, {@code 12,000 rows}; one format
 * for every count the jobs print (thousands separated by commas).
 */
public final class Counts {
  private Counts() {}

  /**
   * {@code n} with thousands separators and the noun that fits it.
   *
   * @param n the count
   * @param one the noun for exactly one ({@code "batch"})
   * @param many the noun for any other count, 0 included ({@code "batches"})
   * @return e.g. {@code "1 batch"}, {@code "0 batches"}, {@code "1,204 batches"}
   */
  public static String of(long n, String one, String many) {
    return String.format(Locale.ROOT, "%,d %s", n, n == 1 ? one : many);
  }

  /**
   * The parts of {@code rows} change rows by operation, so that they add up to {@code rows}: an
   * update is two rows (its before- and after-image), which the updates part says: {@code 25
   * inserts, 4 updates in 8 rows, 6 deletes} of 39 rows; {@code 0 updates} when there are none (any
   * other rows are named: {@code , 2 other rows}).
   *
   * @param rows every change row
   * @param inserts insert rows
   * @param updates updates (after-images)
   * @param deletes delete rows
   * @return the parts, without parentheses
   */
  public static String byOperation(long rows, long inserts, long updates, long deletes) {
    long updateRows = rows - inserts - deletes;
    StringBuilder text = new StringBuilder(of(inserts, "insert", "inserts")).append(", ");
    text.append(of(updates, "update", "updates"));
    if (updates > 0 && updateRows != updates) {
      text.append(" in ").append(of(updateRows, "row", "rows"));
    }
    text.append(", ").append(of(deletes, "delete", "deletes"));
    if (updates == 0 && updateRows != 0) {
      text.append(", ").append(of(updateRows, "other row", "other rows"));
    }
    return text.toString();
  }
}
