package org.lakecdc.io.mssqlcdc.chunk;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Key bounds as JSON that SQL Server's {@code CAST} reads back (docs/scenarios.md C106): a
 * one-column key is a scalar, a composite key an array, an open bound {@code null}; integers are
 * JSON numbers, decimals plain-notation text, {@code datetime}/{@code smalldatetime} ISO-8601 text
 * with milliseconds, other date-times with microseconds ({@code datetimeoffset} at {@code +00:00}),
 * binary {@code 0x} hex (lower case), {@code bit} a JSON boolean, {@code real}/{@code float} JSON
 * numbers, other values their string form. A plan is {@code [[index, lo, hi], ...]}.
 *
 * <p>The text forms drop digits (a {@code datetime2(7)} value loses its last digit, a {@code
 * datetime} keeps milliseconds): {@link #roundTrip} gives the value a bound has once it has crossed
 * JSON, which is the value a reader of the plan binds.
 */
public final class ChunkBounds {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final DateTimeFormatter MILLIS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS", Locale.ROOT);
  private static final DateTimeFormatter MICROS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS", Locale.ROOT);

  private ChunkBounds() {}

  /**
   * One bound as JSON ({@code null} for an open bound).
   *
   * @param key one value per key column (values may be null), or null
   * @param keyTypes the key columns' SQL Server types
   * @throws IllegalArgumentException when the key has another number of values than {@code
   *     keyTypes}
   */
  public static JsonNode toJson(@Nullable List<Object> key, List<SqlServerType> keyTypes) {
    if (key == null) {
      return NODES.nullNode();
    }
    checkSize(key.size(), keyTypes);
    if (key.size() == 1) {
      return value(key.get(0), keyTypes.get(0));
    }
    ArrayNode array = NODES.arrayNode();
    for (int i = 0; i < key.size(); i++) {
      array.add(value(key.get(i), keyTypes.get(i)));
    }
    return array;
  }

  /**
   * A bound read back in the Java types of {@code ChangeRow}; null for JSON {@code null}. An
   * integer bound above the key type's maximum (a plan's last {@code hi} = MAX + 1) reads as null
   * (open).
   *
   * @throws IllegalArgumentException when the node does not fit the key's types
   */
  public static @Nullable List<Object> fromJson(JsonNode node, List<SqlServerType> keyTypes) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return null;
    }
    if (keyTypes.isEmpty()) {
      throw new IllegalArgumentException("A key bound " + node + " needs key types");
    }
    List<JsonNode> parts = new ArrayList<>();
    if (keyTypes.size() == 1 && !node.isArray()) {
      parts.add(node);
    } else if (node.isArray()) {
      node.forEach(parts::add);
    } else {
      throw new IllegalArgumentException(
          "A bound of a " + keyTypes.size() + "-column key must be a JSON array, not " + node);
    }
    checkSize(parts.size(), keyTypes);
    if (parts.size() == 1 && aboveIntegerMax(parts.get(0), keyTypes.get(0))) {
      return null;
    }
    List<Object> out = new ArrayList<>(parts.size());
    for (int i = 0; i < parts.size(); i++) {
      out.add(javaValue(parts.get(i), keyTypes.get(i)));
    }
    return Collections.unmodifiableList(out);
  }

  /** A plan as JSON text {@code [[index, lo, hi], ...]}. */
  public static String planJson(List<Chunk> chunks, List<SqlServerType> keyTypes) {
    ArrayNode plan = NODES.arrayNode();
    for (Chunk c : chunks) {
      ArrayNode chunk = NODES.arrayNode();
      chunk.add(c.index());
      chunk.add(toJson(c.lo(), keyTypes));
      chunk.add(toJson(c.hi(), keyTypes));
      plan.add(chunk);
    }
    return plan.toString();
  }

  /**
   * {@link #planJson}'s form read back.
   *
   * @throws IllegalArgumentException when {@code json} is not of that form
   */
  public static List<Chunk> planFromJson(String json, List<SqlServerType> keyTypes) {
    JsonNode plan;
    try {
      plan = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("A chunk plan must be JSON, not '" + json + "'", e);
    }
    return planFromJson(plan, keyTypes);
  }

  /**
   * {@link #planJson}'s form read back from a parsed node.
   *
   * @throws IllegalArgumentException when {@code plan} is not of that form
   */
  public static List<Chunk> planFromJson(JsonNode plan, List<SqlServerType> keyTypes) {
    if (plan == null || !plan.isArray()) {
      throw new IllegalArgumentException(
          "A chunk plan must be a JSON array [[index, lo, hi], ...], not " + plan);
    }
    List<Chunk> out = new ArrayList<>();
    for (JsonNode c : plan) {
      if (!c.isArray()
          || c.size() != 3
          || !c.get(0).canConvertToInt()
          || !c.get(0).isIntegralNumber()) {
        throw new IllegalArgumentException(
            "A chunk of a plan must be [index, lo, hi] with an integer index, not " + c);
      }
      out.add(
          new Chunk(
              c.get(0).intValue(), fromJson(c.get(1), keyTypes), fromJson(c.get(2), keyTypes)));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * The bound as a reader of its JSON form gets it ({@code fromJson(toJson(key))}): a {@code
   * datetime2(7)} value truncated to microseconds, a {@code datetime} value to milliseconds, an
   * integer above the type's maximum open (null).
   */
  public static @Nullable List<Object> roundTrip(
      @Nullable List<Object> key, List<SqlServerType> keyTypes) {
    return fromJson(toJson(key, keyTypes), keyTypes);
  }

  /**
   * Whether two bounds are the same key: value by value, binary by content, decimals by value (as
   * Java sees them; strings compare exactly).
   */
  public static boolean sameKey(@Nullable List<Object> a, @Nullable List<Object> b) {
    if (a == null || b == null) {
      return a == b;
    }
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      Object x = a.get(i);
      Object y = b.get(i);
      if (x instanceof BigDecimal && y instanceof BigDecimal) {
        if (((BigDecimal) x).compareTo((BigDecimal) y) != 0) {
          return false;
        }
      } else if (x instanceof byte[] && y instanceof byte[]) {
        if (!Arrays.equals((byte[]) x, (byte[]) y)) {
          return false;
        }
      } else if (x == null ? y != null : !x.equals(y)) {
        return false;
      }
    }
    return true;
  }

  private static void checkSize(int size, List<SqlServerType> keyTypes) {
    if (size != keyTypes.size()) {
      throw new IllegalArgumentException(
          "A key bound needs " + keyTypes.size() + " value(s), got " + size);
    }
  }

  private static JsonNode value(@Nullable Object v, SqlServerType type) {
    if (v == null) {
      return NODES.nullNode();
    }
    if (v instanceof Short || v instanceof Integer || v instanceof Long) {
      return NODES.numberNode(((Number) v).longValue());
    }
    if (v instanceof BigInteger) {
      return NODES.numberNode((BigInteger) v);
    }
    if (v instanceof Boolean) {
      return NODES.booleanNode((Boolean) v);
    }
    if (v instanceof Float) {
      return NODES.numberNode((Float) v);
    }
    if (v instanceof Double) {
      return NODES.numberNode((Double) v);
    }
    if (v instanceof BigDecimal) {
      return NODES.textNode(((BigDecimal) v).toPlainString());
    }
    if (v instanceof LocalDateTime) {
      boolean millis = type.name().equals("datetime") || type.name().equals("smalldatetime");
      return NODES.textNode((millis ? MILLIS : MICROS).format((LocalDateTime) v));
    }
    if (v instanceof Instant) {
      return NODES.textNode(
          MICROS.format(LocalDateTime.ofInstant((Instant) v, ZoneOffset.UTC)) + "+00:00");
    }
    if (v instanceof OffsetDateTime) {
      return value(((OffsetDateTime) v).toInstant(), type);
    }
    if (v instanceof LocalDate) {
      return NODES.textNode(v.toString());
    }
    if (v instanceof byte[]) {
      return NODES.textNode("0x" + HexFormat.of().formatHex((byte[]) v));
    }
    return NODES.textNode(v.toString());
  }

  private static boolean aboveIntegerMax(JsonNode node, SqlServerType type) {
    Long max = integerMax(type.name());
    return max != null
        && node.isIntegralNumber()
        && node.bigIntegerValue().compareTo(BigInteger.valueOf(max)) > 0;
  }

  private static @Nullable Long integerMax(String type) {
    return switch (type) {
      case "tinyint" -> 255L;
      case "smallint" -> (long) Short.MAX_VALUE;
      case "int" -> (long) Integer.MAX_VALUE;
      case "bigint" -> Long.MAX_VALUE;
      default -> null;
    };
  }

  private static @Nullable Object javaValue(JsonNode node, SqlServerType type) {
    if (node.isNull()) {
      return null;
    }
    String name = type.name();
    try {
      switch (name) {
        case "tinyint", "smallint", "int", "bigint" -> {
          if (!node.isIntegralNumber()) {
            throw bad(node, type);
          }
          BigInteger v = node.bigIntegerValue();
          long min =
              name.equals("tinyint")
                  ? 0
                  : name.equals("smallint")
                      ? Short.MIN_VALUE
                      : name.equals("int") ? Integer.MIN_VALUE : Long.MIN_VALUE;
          if (v.compareTo(BigInteger.valueOf(min)) < 0
              || v.compareTo(BigInteger.valueOf(integerMax(name))) > 0) {
            throw bad(node, type);
          }
          return switch (name) {
            case "tinyint", "smallint" -> v.shortValue();
            case "int" -> v.intValue();
            default -> v.longValue();
          };
        }
        case "bit" -> {
          if (node.isBoolean()) {
            return node.booleanValue();
          }
          if (node.isIntegralNumber() && (node.intValue() == 0 || node.intValue() == 1)) {
            return node.intValue() == 1;
          }
          throw bad(node, type);
        }
        case "real" -> {
          return node.isNumber() ? node.floatValue() : Float.parseFloat(node.asText());
        }
        case "float" -> {
          return node.isNumber() ? node.doubleValue() : Double.parseDouble(node.asText());
        }
        case "decimal", "numeric", "money", "smallmoney" -> {
          return node.isNumber() ? node.decimalValue() : new BigDecimal(text(node, type));
        }
        case "date" -> {
          return LocalDate.parse(text(node, type));
        }
        case "datetime", "smalldatetime", "datetime2" -> {
          return LocalDateTime.parse(text(node, type));
        }
        case "datetimeoffset" -> {
          return OffsetDateTime.parse(text(node, type)).toInstant();
        }
        case "binary", "varbinary", "image", "timestamp", "rowversion" -> {
          String hex = text(node, type);
          if (!hex.startsWith("0x") && !hex.startsWith("0X")) {
            throw bad(node, type);
          }
          return HexFormat.of().parseHex(hex.substring(2));
        }
        default -> {
          return text(node, type);
        }
      }
    } catch (DateTimeParseException | NumberFormatException e) {
      throw bad(node, type);
    }
  }

  private static String text(JsonNode node, SqlServerType type) {
    if (!node.isTextual()) {
      throw bad(node, type);
    }
    return node.textValue();
  }

  private static IllegalArgumentException bad(JsonNode node, SqlServerType type) {
    return new IllegalArgumentException(
        "A key bound value " + node + " does not fit the key type " + type);
  }
}
