package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.Objects;

/**
 * A Parquet data file written into a table's directory but not yet committed, with its Delta {@code
 * add} action in serialized form, so that workers can write files in parallel and one committer can
 * commit them ({@link DeltaTables#writeDataFiles}, then {@link DeltaTables#commit}). Pipelines
 * carry it in {@link DataFileActionCoder} (its fields, not Java serialization); it stays {@link
 * Serializable} only for the Java-serialized values that hold it. Kernel's own action rows are
 * neither.
 *
 * <p>Until committed the file is invisible to readers; a file whose commit never happens (a retried
 * bundle writes new files with new random names) stays an orphan that {@code VACUUM} removes.
 *
 * @param path the file's absolute URI, e.g. {@code file:/data/bronze/<uuid>-000.parquet}
 * @param sizeBytes the file size in bytes
 * @param rowCount the number of rows in the file (from the writer's statistics), -1 when unknown
 * @param actionJson the {@code add} action as one line of Delta log JSON ({@code {"add":{...}}})
 */
public record DataFileAction(String path, long sizeBytes, long rowCount, String actionJson)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * Checks the components.
   *
   * @param path the file URI
   * @param sizeBytes the file size
   * @param rowCount the row count
   * @param actionJson the action JSON
   * @throws NullPointerException when the path or the JSON is null
   */
  public DataFileAction {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(actionJson, "actionJson");
  }
}
