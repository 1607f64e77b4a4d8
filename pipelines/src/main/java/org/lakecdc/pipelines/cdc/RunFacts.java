package org.lakecdc.pipelines.cdc;

import io.delta.kernel.expressions.And;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeMap;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * A table's part of a run's summary from the facts table, the record of what was committed, for
 * when the pipeline's counters miss batches the table's position says the run committed ({@link
 * CdcToDeltaJob#outcomes}): the batch rows (event NULL) of the target's app id and bronze table
 * with a batch number after the run's start position. Whatever attempt of the committer wrote them
 * (on a cluster a task retried after its worker died, whose Beam counters died with the worker),
 * each committed batch has one such row, so the counts are the run's whatever the retries. The
 * facts table is streamed, its files skipped by their statistics on {@code app_id} and {@code
 * batch_id}; only the sums are held.
 *
 * @param batches the batch rows
 * @param rowsByOperation the sums as {@link JobSummary#rowsByOperation()} holds them ({@code rows},
 *     {@code insert}, {@code update}, {@code delete}); empty when there is no batch row
 */
record RunFacts(long batches, Map<String, Long> rowsByOperation) {

  /**
   * The batch rows of {@code appId} and bronze table {@code target} with a batch number greater
   * than {@code afterBatch}.
   *
   * @param afterBatch the batch of the run's start position (-1 before the first batch)
   * @throws UncheckedIOException when a data file of the facts table cannot be read
   */
  static RunFacts after(
      DeltaTables tables, String factsPath, String appId, String target, long afterBatch) {
    if (!tables.exists(factsPath)) {
      return new RunFacts(0, Map.of());
    }
    Predicate filter =
        new And(
            new Predicate("=", new Column(FactsTable.APP_ID), Literal.ofString(appId)),
            new Predicate(">", new Column(FactsTable.BATCH_ID), Literal.ofLong(afterBatch)));
    long batches = 0;
    long rows = 0;
    long inserts = 0;
    long updates = 0;
    long deletes = 0;
    try (CloseableIterator<Map<String, Object>> all =
        tables.scanAtVersion(factsPath, tables.version(factsPath), filter)) {
      while (all.hasNext()) {
        Map<String, Object> row = all.next();
        if (row.get(FactsTable.EVENT) != null
            || !(row.get(FactsTable.BATCH_ID) instanceof Number batch)
            || batch.longValue() <= afterBatch
            || !appId.equals(row.get(FactsTable.APP_ID))
            || !target.equals(row.get(FactsTable.TARGET))) {
          continue;
        }
        batches++;
        rows += count(row, FactsTable.ROWS);
        inserts += count(row, FactsTable.INSERTS);
        updates += count(row, FactsTable.UPDATES);
        deletes += count(row, FactsTable.DELETES);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + factsPath, e);
    }
    Map<String, Long> byOperation = new TreeMap<>();
    if (batches > 0) {
      byOperation.put("rows", rows);
      byOperation.put("insert", inserts);
      byOperation.put("update", updates);
      byOperation.put("delete", deletes);
    }
    return new RunFacts(batches, byOperation);
  }

  private static long count(Map<String, Object> row, String column) {
    return row.get(column) instanceof Number n ? n.longValue() : 0;
  }
}
