package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The committer's batch log lines name their table in a run of many tables. */
class CommitBatchesTest {
  @Test
  void aBranchOfOneTableInARunOfManyNamesItsTableAndALoneTableDoesNot() {
    // A new table's own branch (WriteStartedChangesToDelta) commits only its table's batches, but
    // its lines sit among the other tables' lines: they name it.
    assertEquals("dbo_part ", new CommitBatches(Map.of(), true).label("dbo_part"));
    // One table alone: the lines need no name.
    assertEquals("", new CommitBatches(Map.of()).label("dbo_part"));
    assertEquals("", new CommitBatches(Map.of(), false).label("dbo_part"));
    // The continuous committer: a table that joined a running run follows in a pipeline of its
    // own, whose lines sit among the other tables' lines.
    assertEquals(
        "dbo_supplier ",
        new WriteChangeStreamToDelta.CommitInRounds(Map.of(), true, 1, 250).label("dbo_supplier"));
    assertEquals(
        "", new WriteChangeStreamToDelta.CommitInRounds(Map.of(), false, 1, 250).label("dbo_part"));
  }

  @Test
  void aCommitterWithoutAThreadIsRefused() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new CommitBatches(Map.of(), true, 0));
    assertEquals("commitThreads=0: a committer needs at least 1 thread", e.getMessage());
  }
}
