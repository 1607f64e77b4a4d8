package org.lakecdc.transforms.delta;

import io.delta.kernel.types.BinaryType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FieldMetadata;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.ShortType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;
import io.delta.kernel.types.TypeChange;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Output types as Delta Kernel types and columns as Kernel struct fields. Column comments are the
 * field metadata key {@value #COMMENT_KEY}, as delta-spark stores them.
 */
final class DeltaTypes {
  /** The field metadata key of a column comment in a Delta schema. */
  static final String COMMENT_KEY = "comment";

  /**
   * The characters Delta refuses in a column name unless the table has column mapping: space and
   * {@code ,;{}()=}, newline and tab (Kernel's {@code SchemaUtils} and delta-spark check the same
   * set).
   */
  static final String CHARS_NEEDING_COLUMN_MAPPING = " ,;{}()\n\t=";

  private DeltaTypes() {}

  static DataType toKernel(OutputType type) {
    switch (type.kind()) {
      case BOOLEAN:
        return BooleanType.BOOLEAN;
      case SMALLINT:
        return ShortType.SHORT;
      case INT:
        return IntegerType.INTEGER;
      case BIGINT:
        return LongType.LONG;
      case FLOAT:
        return FloatType.FLOAT;
      case DOUBLE:
        return DoubleType.DOUBLE;
      case DECIMAL:
        return new DecimalType(type.precision(), type.scale());
      case DATE:
        return DateType.DATE;
      case TIMESTAMP_NTZ:
        return TimestampNTZType.TIMESTAMP_NTZ;
      case TIMESTAMP:
        return TimestampType.TIMESTAMP;
      case STRING:
        return StringType.STRING;
      case BINARY:
        return BinaryType.BINARY;
      default:
        throw new IllegalStateException("Unhandled output type " + type);
    }
  }

  /**
   * The output type of a Kernel type, or null when it has none (nested types, BYTE, VARIANT, ...).
   */
  static @Nullable OutputType fromKernel(DataType type) {
    if (type instanceof BooleanType) {
      return OutputType.BOOLEAN;
    } else if (type instanceof ShortType) {
      return OutputType.SMALLINT;
    } else if (type instanceof IntegerType) {
      return OutputType.INT;
    } else if (type instanceof LongType) {
      return OutputType.BIGINT;
    } else if (type instanceof FloatType) {
      return OutputType.FLOAT;
    } else if (type instanceof DoubleType) {
      return OutputType.DOUBLE;
    } else if (type instanceof DecimalType) {
      DecimalType decimal = (DecimalType) type;
      return OutputType.decimal(decimal.getPrecision(), decimal.getScale());
    } else if (type instanceof DateType) {
      return OutputType.DATE;
    } else if (type instanceof TimestampNTZType) {
      return OutputType.TIMESTAMP_NTZ;
    } else if (type instanceof TimestampType) {
      return OutputType.TIMESTAMP;
    } else if (type instanceof StringType) {
      return OutputType.STRING;
    } else if (type instanceof BinaryType) {
      return OutputType.BINARY;
    }
    return null;
  }

  static StructField toField(DeltaColumn column) {
    FieldMetadata metadata =
        column.comment() == null
            ? FieldMetadata.empty()
            : FieldMetadata.builder().putString(COMMENT_KEY, column.comment()).build();
    return new StructField(column.name(), toKernel(column.type()), column.nullable(), metadata);
  }

  static StructType toStruct(List<DeltaColumn> columns) {
    List<StructField> fields = new ArrayList<>(columns.size());
    for (DeltaColumn column : columns) {
      fields.add(toField(column));
    }
    return new StructType(fields);
  }

  /** A field with its comment replaced, keeping its other metadata and its type changes. */
  static StructField withComment(StructField field, String comment) {
    FieldMetadata metadata =
        FieldMetadata.builder()
            .fromMetadata(field.getMetadata())
            .putString(COMMENT_KEY, comment)
            .build();
    return field.withNewMetadata(metadata);
  }

  /**
   * A field with its type widened to {@code to}, the change appended to its type changes (Delta
   * type widening: Kernel writes them as the field metadata {@code delta.typeChanges}, a list of
   * {@code {"fromType": ..., "toType": ...}}), keeping its name, nullability and metadata.
   */
  static StructField widen(StructField field, OutputType to) {
    DataType target = toKernel(to);
    List<TypeChange> changes = new ArrayList<>(field.getTypeChanges());
    changes.add(new TypeChange(field.getDataType(), target));
    return field.withDataType(target).withTypeChanges(changes);
  }

  /** Whether Delta refuses this column name without column mapping. */
  static boolean needsColumnMapping(String name) {
    for (int i = 0; i < name.length(); i++) {
      if (CHARS_NEEDING_COLUMN_MAPPING.indexOf(name.charAt(i)) >= 0) {
        return true;
      }
    }
    return false;
  }

  static @Nullable String comment(StructField field) {
    Object value = field.getMetadata().get(COMMENT_KEY);
    return value instanceof String ? (String) value : null;
  }

  /**
   * The columns of a table schema.
   *
   * @throws IncompatibleTableException when a column has a type without an output type
   */
  static List<DeltaColumn> toColumns(String path, StructType schema) {
    List<DeltaColumn> columns = new ArrayList<>(schema.length());
    for (StructField field : schema.fields()) {
      OutputType type = outputType(path, field);
      columns.add(new DeltaColumn(field.getName(), type, field.isNullable(), comment(field)));
    }
    return columns;
  }

  /** The index of a field, names compared ignoring case as Delta does; -1 when absent. */
  static int indexOfIgnoreCase(StructType schema, String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    for (int i = 0; i < schema.length(); i++) {
      if (schema.at(i).getName().toLowerCase(Locale.ROOT).equals(lower)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The output type of a column of table {@code path}.
   *
   * @throws IncompatibleTableException for a Delta type this project does not read or write
   */
  static OutputType outputType(String path, StructField field) {
    OutputType type = fromKernel(field.getDataType());
    if (type == null) {
      throw new IncompatibleTableException(
          "Delta table "
              + path
              + " has column '"
              + field.getName()
              + "' of type "
              + field.getDataType()
              + ", which this project does not read or write");
    }
    return type;
  }
}
