package org.lakecdc.io.mssqlcdc.schema;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.Schema.Field;
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;

/**
 * The Beam schema of change rows (docs/tables.md "Bronze"): the metadata columns, then the captured
 * columns. Fields, in order:
 *
 * <table>
 *   <caption>Change row fields</caption>
 *   <tr><th>Field</th><th>Beam type</th><th>Nullable</th></tr>
 *   <tr><td>{@code _capture_instance}</td><td>STRING</td><td>no</td></tr>
 *   <tr><td>{@code _start_lsn}</td><td>STRING ({@code 0x} + 20 upper-case hex)</td><td>no</td></tr>
 *   <tr><td>{@code _seqval}</td><td>STRING (same form; NULL on snapshot rows)</td><td>yes</td></tr>
 *   <tr><td>{@code _operation}</td><td>INT32 (0 snapshot, 1 delete, 2 insert, 3 update
 *       before-image, 4 update after-image)</td><td>no</td></tr>
 *   <tr><td>{@code _command_id}</td><td>INT32; absent when {@code includeCommandId} is
 *       false</td><td>yes</td></tr>
 *   <tr><td>{@code _commit_ts}</td><td>{@link SqlTypes#DATETIME} (LocalDateTime, UTC, no
 *       zone)</td><td>no</td></tr>
 *   <tr><td>captured columns</td><td>{@link OutputType#toBeamFieldType()}</td><td>yes</td></tr>
 * </table>
 */
public final class ChangeSchema {
  private ChangeSchema() {}

  /**
   * The change-row schema for the given captured columns.
   *
   * @param captured the captured columns in output order (inferred or declared); at least one
   * @param includeCommandId whether {@code _command_id} is read ({@code includeCommandId} option)
   * @return the Beam schema
   * @throws IllegalArgumentException when {@code captured} is empty, a name is reserved (the {@link
   *     ReservedNames} message) or two names are equal ignoring case ({@code Column '<name>'
   *     appears twice in the captured columns (names are compared ignoring case)})
   */
  public static Schema of(List<ColumnSpec> captured, boolean includeCommandId) {
    Objects.requireNonNull(captured, "captured");
    if (captured.isEmpty()) {
      throw new IllegalArgumentException("A change schema needs at least one captured column");
    }
    ReservedNames.checkOutput(captured.stream().map(ColumnSpec::name).toList());
    Set<String> seen = new HashSet<>();
    List<Field> fields = new ArrayList<>(metadataFields(includeCommandId));
    for (ColumnSpec column : captured) {
      if (!seen.add(column.name().toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "Column '"
                + column.name()
                + "' appears twice in the captured columns (names are compared ignoring case)");
      }
      fields.add(Field.of(column.name(), column.type().toBeamFieldType()));
    }
    return Schema.of(fields.toArray(new Field[0]));
  }

  /**
   * The metadata fields, in order, as {@link #of} puts them first.
   *
   * @param includeCommandId whether {@code _command_id} is among them
   * @return five or six fields
   */
  public static List<Field> metadataFields(boolean includeCommandId) {
    List<Field> fields = new ArrayList<>();
    fields.add(
        Field.of(MetadataColumns.CAPTURE_INSTANCE, FieldType.STRING)
            .withDescription("Capture instance the row was read from"));
    fields.add(
        Field.of(MetadataColumns.START_LSN, FieldType.STRING)
            .withDescription("__$start_lsn: commit LSN, 0x + 20 upper-case hex digits"));
    fields.add(
        Field.nullable(MetadataColumns.SEQVAL, FieldType.STRING)
            .withDescription("__$seqval: order within the transaction; NULL on snapshot rows"));
    fields.add(
        Field.of(MetadataColumns.OPERATION, FieldType.INT32)
            .withDescription(
                "0 snapshot, 1 delete, 2 insert, 3 update before-image, 4 update after-image"));
    if (includeCommandId) {
      fields.add(
          Field.nullable(MetadataColumns.COMMAND_ID, FieldType.INT32)
              .withDescription(
                  "__$command_id, numbered per capture instance; NULL on snapshot rows"));
    }
    fields.add(
        Field.of(MetadataColumns.COMMIT_TS, FieldType.logicalType(SqlTypes.DATETIME))
            .withDescription("Commit time of _start_lsn, UTC"));
    return fields;
  }

  /**
   * The number of metadata fields before the captured columns.
   *
   * @param includeCommandId whether {@code _command_id} is read
   * @return 6 with {@code _command_id}, else 5
   */
  public static int metadataFieldCount(boolean includeCommandId) {
    return includeCommandId ? 6 : 5;
  }

  /**
   * Whether a change schema has the {@code _command_id} field.
   *
   * @param changeSchema a schema {@link #of} built
   * @return true when {@code _command_id} is present
   */
  public static boolean hasCommandId(Schema changeSchema) {
    return changeSchema.hasField(MetadataColumns.COMMAND_ID);
  }

  /**
   * The index of the first captured column in a change schema.
   *
   * @param changeSchema a schema {@link #of} built
   * @return 6 with {@code _command_id}, else 5
   */
  public static int capturedOffset(Schema changeSchema) {
    return metadataFieldCount(hasCommandId(changeSchema));
  }

  /**
   * The captured columns of a change schema, in order: the inverse of {@link #of}.
   *
   * @param changeSchema a schema {@link #of} built
   * @return the captured columns
   * @throws IllegalArgumentException when the schema does not start with the metadata fields or a
   *     captured field has a type {@link OutputType#fromBeamFieldType} does not accept
   */
  public static List<ColumnSpec> capturedColumns(Schema changeSchema) {
    boolean commandId = hasCommandId(changeSchema);
    List<Field> metadata = metadataFields(commandId);
    int offset = metadata.size();
    if (changeSchema.getFieldCount() < offset) {
      throw new IllegalArgumentException("Not a change schema: " + changeSchema);
    }
    for (int i = 0; i < offset; i++) {
      Field f = changeSchema.getField(i);
      if (!f.getName().equals(metadata.get(i).getName())
          || !f.getType().equals(metadata.get(i).getType())) {
        throw new IllegalArgumentException(
            "Not a change schema: field "
                + i
                + " is "
                + f.getName()
                + " "
                + f.getType()
                + ", expected "
                + metadata.get(i).getName()
                + " "
                + metadata.get(i).getType());
      }
    }
    List<ColumnSpec> columns = new ArrayList<>();
    for (int i = offset; i < changeSchema.getFieldCount(); i++) {
      Field f = changeSchema.getField(i);
      columns.add(new ColumnSpec(f.getName(), OutputType.fromBeamFieldType(f.getType())));
    }
    return columns;
  }
}
