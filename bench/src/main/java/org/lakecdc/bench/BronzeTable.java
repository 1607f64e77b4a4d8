package org.lakecdc.bench;

import io.delta.kernel.Table;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * Reads a Delta table the job or the silver engine wrote, with Delta Kernel's public API only (not
 * the project's own classes, which the write paths may change): its row count, from the latest
 * snapshot's data files, their Parquet footers and their deletion vectors' cardinalities. Footers
 * already read are remembered, so polling a growing table reads each new file's footer once.
 */
final class BronzeTable {
  private final Path path;
  private final Configuration conf = new Configuration();
  private final Engine engine = DefaultEngine.create(conf);
  private final Map<String, Long> rowsByFile = new HashMap<>();

  /** A reader of the table at {@code path} (a local directory, existing or not yet). */
  BronzeTable(Path path) {
    this.path = path.toAbsolutePath();
  }

  /**
   * The rows in the table's latest version: the sum of its data files' row counts, less the rows
   * their deletion vectors delete (each {@code add}'s {@code deletionVector.cardinality}).
   *
   * @return the count, 0 when the table does not exist yet
   * @throws UncheckedIOException when a file cannot be read
   */
  long rows() {
    URI root =
        URI.create(path.toUri().toString() + (path.toUri().toString().endsWith("/") ? "" : "/"));
    long total = 0;
    try (CloseableIterator<FilteredColumnarBatch> batches =
        Table.forPath(engine, path.toString())
            .getLatestSnapshot(engine)
            .getScanBuilder()
            .build()
            .getScanFiles(engine)) {
      while (batches.hasNext()) {
        try (CloseableIterator<Row> files = batches.next().getRows()) {
          while (files.hasNext()) {
            Row file = files.next();
            Row add = file.getStruct(file.getSchema().indexOf("add"));
            String relative = add.getString(add.getSchema().indexOf("path"));
            Long rows = rowsByFile.get(relative);
            if (rows == null) {
              rows = footerRows(root.resolve(relative));
              rowsByFile.put(relative, rows);
            }
            total += rows;
            int dv = add.getSchema().indexOf("deletionVector");
            if (dv >= 0 && !add.isNullAt(dv)) {
              Row vector = add.getStruct(dv);
              total -= vector.getLong(vector.getSchema().indexOf("cardinality"));
            }
          }
        }
      }
    } catch (TableNotFoundException e) {
      return 0;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of " + path, e);
    }
    return total;
  }

  private long footerRows(URI file) {
    try (ParquetFileReader reader =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(file), conf))) {
      return reader.getRecordCount();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Parquet footer of " + file, e);
    }
  }
}
