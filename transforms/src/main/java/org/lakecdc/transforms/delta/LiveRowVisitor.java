package org.lakecdc.transforms.delta;

/** Receives the live rows of the tables' {@code scanLiveRows}. */
@FunctionalInterface
public interface LiveRowVisitor {
  /**
   * One row no deletion vector deletes.
   *
   * @param file the data file's {@code add} path as the log holds it (relative to the table root,
   *     URI-encoded), which {@link DeletionVectorUpdate#file()} takes
   * @param position the row's position in the file, from 0 (Parquet row order)
   * @param values the requested columns' values, in the requested order, as the tables' {@code
   *     scan} gives them; the array is reused for the next row
   */
  void visit(String file, long position, Object[] values);
}
