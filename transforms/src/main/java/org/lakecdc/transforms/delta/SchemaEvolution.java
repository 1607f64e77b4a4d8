package org.lakecdc.transforms.delta;

import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * What {@link DeltaTables#evolveSchema} changed in a table's schema: the columns it appended and
 * the columns whose type it widened, all in one metadata commit. Both empty when the table could
 * already take the rows (nothing was committed).
 *
 * @param added the columns appended after the existing ones, in order, each nullable; rows written
 *     before read them as NULL
 * @param widened the columns whose type was widened, in table order; rows written before read in
 *     the new type
 * @param version the table version of the metadata commit, or -1 when nothing was committed
 */
public record SchemaEvolution(List<DeltaColumn> added, List<Widening> widened, long version) {

  /**
   * Copies the lists.
   *
   * @param added the columns appended
   * @param widened the columns widened
   * @param version the commit's table version, or -1
   */
  public SchemaEvolution {
    added = List.copyOf(added);
    widened = List.copyOf(widened);
  }

  /** Nothing changed, nothing committed. */
  static final SchemaEvolution NONE = new SchemaEvolution(List.of(), List.of(), -1);

  /**
   * Whether a metadata commit changed the schema.
   *
   * @return true when a column was added or widened
   */
  public boolean changed() {
    return !added.isEmpty() || !widened.isEmpty();
  }

  /**
   * The names of the added columns, e.g. {@code note, gift_wrap}: comma-separated, in order.
   *
   * @return the names; empty text when none was added
   */
  public String addedNames() {
    return added.stream().map(DeltaColumn::name).collect(Collectors.joining(", "));
  }

  /**
   * The widenings as text, e.g. {@code amount DECIMAL(9,2) -> DECIMAL(18,4)}: comma-separated, in
   * table order.
   *
   * @return the text; empty when nothing was widened
   */
  public String widenedText() {
    return widened.stream().map(Widening::toString).collect(Collectors.joining(", "));
  }

  /**
   * One column whose type was widened (Delta type widening; recorded in the column's field metadata
   * {@code delta.typeChanges}).
   *
   * @param column the column name, as the table spells it
   * @param from the type before
   * @param to the type after; every value of {@code from} fits it unchanged
   */
  public record Widening(String column, OutputType from, OutputType to) {
    /**
     * Checks the components.
     *
     * @param column the column name
     * @param from the type before
     * @param to the type after
     * @throws NullPointerException when a component is null
     */
    public Widening {
      Objects.requireNonNull(column, "column");
      Objects.requireNonNull(from, "from");
      Objects.requireNonNull(to, "to");
    }

    /** {@code <column> <from> -> <to>}. */
    @Override
    public String toString() {
      return column + " " + from + " -> " + to;
    }
  }
}
