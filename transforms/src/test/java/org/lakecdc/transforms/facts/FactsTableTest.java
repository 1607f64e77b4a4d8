package org.lakecdc.transforms.facts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import java.time.LocalDateTime;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;

/** Facts rows (docs/tables.md "Facts"; docs/scenarios.md C126). */
class FactsTableTest {
  @Test
  void c126AnUnknownFactsColumnFailsBeforeAnythingIsWritten() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> FactsTable.row().set("read_MB", 1.0));
    assertEquals("Unknown facts column 'read_MB'", e.getMessage());
  }

  @Test
  void instantsAreStoredAsUtcDateTimesAndUnsetColumnsAreNull() {
    Row row =
        FactsTable.row()
            .set(FactsTable.APP_ID, "a")
            .set(FactsTable.END_COMMIT_TS, Instant.parse("2026-09-28T13:50:00.123Z"))
            .build();
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 50, 0, 123_000_000),
        row.getLogicalTypeValue(FactsTable.END_COMMIT_TS, LocalDateTime.class));
    assertEquals(null, row.getInt64(FactsTable.BATCH_ID));
    assertEquals(29, FactsTable.SCHEMA.getFieldCount());
  }
}
