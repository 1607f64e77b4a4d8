package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.DateTimeException;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;

/** The simulator's reading of stored values without a formatter. */
class SqlValuesTest {

  /**
   * Every day 01 to 31 of every month, in a leap year of the four-hundred rule (2000), a year the
   * hundred rule makes common (1900), a leap year (2024) and a common one (2023): the date {@link
   * LocalDate#parse} reads, or null where it refuses the day (which it then refuses with its
   * message).
   */
  @Test
  void isoDateReadsWhatLocalDateParseReadsAndNothingItRefuses() {
    int read = 0;
    for (int year : new int[] {1900, 2000, 2023, 2024}) {
      for (int month = 1; month <= 12; month++) {
        for (int day = 1; day <= 31; day++) {
          String text = String.format("%04d-%02d-%02d", year, month, day);
          LocalDate expected;
          try {
            expected = LocalDate.parse(text);
          } catch (DateTimeException e) {
            expected = null;
          }
          assertEquals(expected, SqlValues.isoDate(text), text);
          read += expected == null ? 0 : 1;
        }
      }
    }
    assertEquals(365 + 366 + 365 + 366, read);
    assertNull(SqlValues.isoDate("2024-00-10"));
    assertNull(SqlValues.isoDate("2024-13-10"));
    assertNull(SqlValues.isoDate("2024-01-00"));
    assertNull(SqlValues.isoDate("2024-1-100"));
    assertNull(SqlValues.isoDate("+2024-01-01"));
  }
}
