package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** Retry classification by SQL Server error number and SQLSTATE. */
class TransientErrorsTest {
  @ParameterizedTest(name = "error {0}, SQLSTATE {1}: retry={2}")
  @CsvSource({
    // deadlock victim
    "1205, 40001, true",
    "1205, S0001, true",
    // Azure SQL transient errors
    "4060, S0001, true",
    "4221, S0001, true",
    "10928, S0001, true",
    "10929, S0001, true",
    "40143, S0001, true",
    "40197, S0001, true",
    "40501, S0001, true",
    "40613, S0001, true",
    "49918, S0001, true",
    "49919, S0001, true",
    "49920, S0001, true",
    // transport-level errors and dropped connections
    "10053, S0001, true",
    "10054, S0001, true",
    "10060, S0001, true",
    "233, S0001, true",
    "64, S0001, true",
    "0, 08S01, true",
    "0, 08001, true",
    "0, 08003, true",
    "0, HYT00, true",
    "0, HYT01, true",
    // decisions and permanent errors
    "1222, S0001, false",
    "18456, S0001, false",
    "229, S0005, false",
    "208, S0002, false",
    "102, S0001, false",
    "0, 28000, false",
    "0, HY000, false",
    "0, HY008, false",
  })
  void shouldClassifyDatabaseErrors(int number, String state, boolean transientError) {
    SQLException e = new SQLException("error " + number, state, number);
    assertEquals(transientError, TransientErrors.isTransient(e));
    assertEquals(transientError, TransientErrors.isTransient(new CdcException("wrapped", e)));
  }

  @Test
  void neverRetriesDecisions() {
    SQLException broken = new SQLException("TCP reset", "08S01", 10054);
    List<RuntimeException> decisions =
        List.of(
            new DataLossError("dbo_orders", Lsn.ZERO, Lsn.ZERO, "gone"),
            new SchemaChangedError("changed"),
            new CaptureInstanceNotFoundError("dbo_x", List.of()),
            new ChangeTablePermissionError("dbo_orders", "reader", broken),
            new IllegalArgumentException("State: 08S01", broken));
    for (RuntimeException decision : decisions) {
      assertFalse(TransientErrors.isTransient(decision), decision.toString());
    }
  }

  @Test
  void doesNotRetryErrorsWithoutADatabaseCause() {
    assertFalse(TransientErrors.isTransient(new RuntimeException("connection reset")));
    assertFalse(TransientErrors.isTransient(new IllegalStateException("closed")));
  }
}
