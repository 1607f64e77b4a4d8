package org.lakecdc.pipelines.history;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.silver.ApplyChangesLauncher;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.VacuumResult;
import org.lakecdc.transforms.silver.SilverMaintenance;
import org.lakecdc.transforms.silver.SilverMaintenance.CompactionOptions;
import org.lakecdc.transforms.silver.SilverMaintenance.CompactionResult;

/**
 * {@code ApplyChanges --maintenance} on history tables: the compaction and vacuum of silver (a file
 * whose deletion vector deletes enough of its rows is rewritten without them; files no version
 * within the retention references are deleted), one line per table: {@code History maintenance <ci>
 * <path>: compacted F files into N (R rows, P deleted rows purged), vacuumed V files (B bytes)}.
 */
public final class HistoryMaintenance {
  private HistoryMaintenance() {}

  /**
   * Maintains the history table of each table that has one.
   *
   * @return {@link JobExit#OK}, or {@link JobExit#TABLE_FAILED} when one failed (the others ran)
   */
  public static int maintain(
      List<ApplyChangesLauncher.Table> tables,
      SilverMaintenance maintenance,
      Set<String> operations,
      CompactionOptions compaction,
      Duration retention,
      PrintStream out,
      PrintStream err) {
    List<String> failed = new ArrayList<>();
    int count = 0;
    for (ApplyChangesLauncher.Table table : tables) {
      if (table.history() == null) {
        continue;
      }
      count++;
      String name = table.captureInstance();
      List<String> done = new ArrayList<>();
      try {
        if (operations.contains("compact")) {
          CompactionResult c;
          try {
            c = maintenance.compact(table.history(), List.of(), compaction);
          } catch (DeltaConflictException e) {
            c = null;
          }
          done.add(
              c == null
                  ? "compaction skipped (a concurrent commit won; run it again)"
                  : c.committed()
                      ? "compacted "
                          + Counts.of(c.filesRemoved(), "file", "files")
                          + " into "
                          + Counts.of(c.filesAdded(), "file", "files")
                          + " ("
                          + Counts.of(c.rowsWritten(), "row", "rows")
                          + ", "
                          + Counts.of(c.deletedRowsPurged(), "deleted row", "deleted rows")
                          + " purged)"
                      : "nothing to compact");
        }
        if (operations.contains("vacuum")) {
          VacuumResult v = maintenance.vacuum(table.history(), retention, false);
          done.add(
              "vacuumed "
                  + Counts.of(v.files().size(), "file", "files")
                  + " ("
                  + Counts.of(v.bytes(), "byte", "bytes")
                  + ")");
        }
      } catch (RuntimeException e) {
        String line = CommandLine.firstLine(e);
        out.printf("History maintenance %s %s: FAILED: %s%n", name, table.history(), line);
        failed.add(name + ": " + line);
        continue;
      }
      out.printf("History maintenance %s %s: %s%n", name, table.history(), String.join(", ", done));
    }
    if (!failed.isEmpty()) {
      err.println(
          "error: maintenance of "
              + Counts.of(failed.size(), "history table", "history tables")
              + " of "
              + count
              + " failed, the others ran: "
              + String.join(" | ", failed));
      return JobExit.TABLE_FAILED;
    }
    return JobExit.OK;
  }
}
