package org.lakecdc.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.Schema.TypeName;
import org.apache.beam.sdk.schemas.logicaltypes.FixedPrecisionNumeric;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;
import org.lakecdc.transforms.silver.SilverImage;

/**
 * A wave of silver images as one Parquet file for the delta-spark MERGE (bench-spark's {@code
 * DeltaSparkMerge}): the silver row's fields, then BOOLEAN {@code _delete}, written with
 * parquet-java (Snappy). Field types: INT32, INT64, BOOLEAN, STRING, DECIMAL of at most 18 digits
 * (INT64 unscaled), DATE (INT32 days), TIMESTAMP_NTZ (INT64 microseconds, not adjusted to UTC:
 * Spark reads it as TIMESTAMP_NTZ).
 */
final class WaveFile {
  /** The flag column: true for a delete image. */
  static final String DELETE = "_delete";

  private WaveFile() {}

  /**
   * Writes the images to {@code file} (replaced).
   *
   * @param schema the images' row schema
   * @param images the wave
   * @param file the Parquet file
   * @throws IllegalArgumentException when a field has a type this writer does not take
   * @throws UncheckedIOException when the file cannot be written
   */
  static void write(Schema schema, List<SilverImage> images, Path file) {
    MessageType message = messageType(schema);
    try {
      Files.createDirectories(file.getParent());
      Files.deleteIfExists(file);
      try (ParquetWriter<SilverImage> writer =
          new Builder(new LocalOutputFile(file), schema, message)
              .withCompressionCodec(CompressionCodecName.SNAPPY)
              .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
              .build()) {
        for (SilverImage image : images) {
          writer.write(image);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + file, e);
    }
  }

  /** The Parquet schema of a wave file of {@code schema}'s rows. */
  static MessageType messageType(Schema schema) {
    Types.MessageTypeBuilder builder = Types.buildMessage();
    for (Schema.Field f : schema.getFields()) {
      Type.Repetition repetition =
          f.getType().getNullable() ? Type.Repetition.OPTIONAL : Type.Repetition.REQUIRED;
      builder.addField(primitive(f, repetition));
    }
    builder.addField(Types.required(PrimitiveTypeName.BOOLEAN).named(DELETE));
    return builder.named("wave");
  }

  private static Type primitive(Schema.Field f, Type.Repetition repetition) {
    Schema.FieldType t = f.getType();
    if (t.getTypeName() == TypeName.LOGICAL_TYPE) {
      String id = t.getLogicalType().getIdentifier();
      if (id.equals(SqlTypes.DATE.getIdentifier())) {
        return Types.primitive(PrimitiveTypeName.INT32, repetition)
            .as(LogicalTypeAnnotation.dateType())
            .named(f.getName());
      }
      if (id.equals(SqlTypes.DATETIME.getIdentifier())) {
        return Types.primitive(PrimitiveTypeName.INT64, repetition)
            .as(LogicalTypeAnnotation.timestampType(false, LogicalTypeAnnotation.TimeUnit.MICROS))
            .named(f.getName());
      }
      if (id.equals(FixedPrecisionNumeric.IDENTIFIER)) {
        Row argument = t.getLogicalType().getArgument();
        int precision = argument.getInt32("precision");
        int scale = argument.getInt32("scale");
        if (precision <= 18) {
          return Types.primitive(PrimitiveTypeName.INT64, repetition)
              .as(LogicalTypeAnnotation.decimalType(scale, precision))
              .named(f.getName());
        }
      }
    } else if (t.getTypeName() == TypeName.INT32) {
      return Types.primitive(PrimitiveTypeName.INT32, repetition).named(f.getName());
    } else if (t.getTypeName() == TypeName.INT64) {
      return Types.primitive(PrimitiveTypeName.INT64, repetition).named(f.getName());
    } else if (t.getTypeName() == TypeName.BOOLEAN) {
      return Types.primitive(PrimitiveTypeName.BOOLEAN, repetition).named(f.getName());
    } else if (t.getTypeName() == TypeName.STRING) {
      return Types.primitive(PrimitiveTypeName.BINARY, repetition)
          .as(LogicalTypeAnnotation.stringType())
          .named(f.getName());
    }
    throw new IllegalArgumentException(
        "A wave file cannot hold field " + f.getName() + " of type " + t);
  }

  private static final class Builder extends ParquetWriter.Builder<SilverImage, Builder> {
    private final Schema schema;
    private final MessageType message;

    Builder(LocalOutputFile file, Schema schema, MessageType message) {
      super(file);
      this.schema = schema;
      this.message = message;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<SilverImage> getWriteSupport(Configuration conf) {
      return new ImageWriteSupport(schema, message);
    }
  }

  private static final class ImageWriteSupport extends WriteSupport<SilverImage> {
    private final Schema schema;
    private final MessageType message;
    private RecordConsumer out;

    ImageWriteSupport(Schema schema, MessageType message) {
      this.schema = schema;
      this.message = message;
    }

    @Override
    public WriteContext init(Configuration configuration) {
      return new WriteContext(message, new HashMap<>());
    }

    @Override
    public void prepareForWrite(RecordConsumer recordConsumer) {
      out = recordConsumer;
    }

    @Override
    public void write(SilverImage image) {
      Row row = image.row();
      out.startMessage();
      int n = schema.getFieldCount();
      for (int i = 0; i < n; i++) {
        Object value = row.getValue(i);
        if (value == null) {
          continue;
        }
        String name = schema.getField(i).getName();
        out.startField(name, i);
        if (value instanceof Integer v) {
          out.addInteger(v);
        } else if (value instanceof Long v) {
          out.addLong(v);
        } else if (value instanceof Boolean v) {
          out.addBoolean(v);
        } else if (value instanceof String v) {
          out.addBinary(Binary.fromString(v));
        } else if (value instanceof BigDecimal v) {
          out.addLong(v.unscaledValue().longValueExact());
        } else if (value instanceof LocalDate v) {
          out.addInteger((int) v.toEpochDay());
        } else if (value instanceof LocalDateTime v) {
          java.time.Instant at = v.toInstant(ZoneOffset.UTC);
          out.addLong(at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000);
        } else {
          throw new IllegalArgumentException(
              "A wave file cannot hold " + value.getClass().getName() + " of field " + name);
        }
        out.endField(name, i);
      }
      out.startField(DELETE, n);
      out.addBoolean(image.delete());
      out.endField(DELETE, n);
      out.endMessage();
    }
  }
}
