package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * One column of a Delta table this project writes: its name, output type, nullability and comment.
 * The comment is stored as the Delta field metadata key {@code comment}, which is what
 * delta-spark's {@code DESCRIBE TABLE} shows as the column comment.
 *
 * @param name the column name; not empty. Without column mapping Delta refuses the characters
 *     {@code " ,;{}()\n\t="} in names (Kernel checks at creation)
 * @param type the output type (the Delta type is {@link OutputType#toString()}'s Spark DDL type)
 * @param nullable whether NULL is allowed; a column added to an existing table must be nullable
 * @param comment the column comment, or null for none
 */
public record DeltaColumn(String name, OutputType type, boolean nullable, @Nullable String comment)
    implements Serializable {

  /**
   * Checks the components.
   *
   * @param name the column name
   * @param type the output type
   * @param nullable whether NULL is allowed
   * @param comment the comment, or null
   * @throws NullPointerException when the name or the type is null
   * @throws IllegalArgumentException when the name is empty
   */
  public DeltaColumn {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("A Delta column name cannot be empty");
    }
  }

  /**
   * A nullable column.
   *
   * @param name the column name
   * @param type the output type
   * @param comment the comment, or null for none
   * @return the column
   */
  public static DeltaColumn nullable(String name, OutputType type, @Nullable String comment) {
    return new DeltaColumn(name, type, true, comment);
  }

  /**
   * A column that never holds NULL (the writer refuses a NULL value for it).
   *
   * @param name the column name
   * @param type the output type
   * @param comment the comment, or null for none
   * @return the column
   */
  public static DeltaColumn required(String name, OutputType type, @Nullable String comment) {
    return new DeltaColumn(name, type, false, comment);
  }

  /**
   * The columns of a Beam schema, in order: name, {@link OutputType#fromBeamFieldType} of the field
   * type, the field's nullability, and its description as the comment (an empty description is no
   * comment). This is how a change-row schema ({@code ChangeSchema}) becomes bronze columns with
   * the metadata column comments.
   *
   * @param schema a Beam schema whose field types all have an output type
   * @return the columns
   * @throws IllegalArgumentException when a field type has no output type (the {@link
   *     OutputType#fromBeamFieldType} message, prefixed with the field name)
   */
  public static List<DeltaColumn> fromBeamSchema(Schema schema) {
    List<DeltaColumn> columns = new ArrayList<>(schema.getFieldCount());
    for (Schema.Field field : schema.getFields()) {
      OutputType type;
      try {
        type = OutputType.fromBeamFieldType(field.getType());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("Field '" + field.getName() + "': " + e.getMessage(), e);
      }
      String description = field.getDescription();
      columns.add(
          new DeltaColumn(
              field.getName(),
              type,
              field.getType().getNullable(),
              description == null || description.isEmpty() ? null : description));
    }
    return columns;
  }

  /**
   * This column as a Beam field of {@link OutputType#toBeamFieldType()} with this nullability and
   * the comment as description.
   *
   * @return the Beam field
   */
  public Schema.Field toBeamField() {
    Schema.Field field = Schema.Field.of(name, type.toBeamFieldType().withNullable(nullable));
    return comment == null ? field : field.withDescription(comment);
  }

  /**
   * A Beam schema with one field per column, in order ({@link #toBeamField()}).
   *
   * @param columns the columns
   * @return the schema
   */
  public static Schema toBeamSchema(List<DeltaColumn> columns) {
    return Schema.of(columns.stream().map(DeltaColumn::toBeamField).toArray(Schema.Field[]::new));
  }
}
