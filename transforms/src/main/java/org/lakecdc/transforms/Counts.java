package org.lakecdc.transforms;

import java.util.Locale;

/** Counts for people to read: {@code 1 batch}, {@code 2 batches}, {@code 12,000 rows}. */
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
}
