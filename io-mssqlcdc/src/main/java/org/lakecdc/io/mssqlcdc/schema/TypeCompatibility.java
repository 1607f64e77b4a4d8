package org.lakecdc.io.mssqlcdc.schema;

import java.util.Objects;

/**
 * The compatibility rule between output types (docs/tables.md "Schema evolution of bronze"):
 * whether every value of one type fits another unchanged. Used to merge the capture instances of a
 * table (the newer instance's type wins when the older one fits it, docs/behaviour.md §5.3) and to
 * check that a query's type still holds a captured type after DDL ({@code fits(capturedNew,
 * expected)}, docs/behaviour.md §3.4 to §3.6).
 */
public final class TypeCompatibility {
  private TypeCompatibility() {}

  /**
   * True when every value of {@code older} fits {@code newer} unchanged:
   *
   * <ul>
   *   <li>equal types;
   *   <li>integer widening {@code SMALLINT < INT < BIGINT} (SMALLINT stands for SQL Server {@code
   *       tinyint} and {@code smallint});
   *   <li>{@code FLOAT -> DOUBLE}; {@code DATE -> TIMESTAMP_NTZ};
   *   <li>{@code SMALLINT} or {@code INT} (not {@code BIGINT}) {@code -> DOUBLE};
   *   <li>integer {@code -> DECIMAL(p,s)} when {@code p - s} is at least 5 (SMALLINT), 10 (INT) or
   *       20 (BIGINT), the integer digits of Spark's decimal for that integer type;
   *   <li>{@code DECIMAL(p1,s1) -> DECIMAL(p2,s2)} when {@code s2 >= s1} and {@code p2 - s2 >= p1 -
   *       s1}.
   * </ul>
   *
   * Nothing else fits (in particular no narrowing, no {@code FLOAT -> DECIMAL}, no {@code BIGINT ->
   * DOUBLE}, no {@code TIMESTAMP <-> TIMESTAMP_NTZ}, nothing to or from STRING or BINARY but
   * itself).
   *
   * @param older the type values have now
   * @param newer the type they would be held in
   * @return whether {@code older} fits {@code newer}
   */
  public static boolean fits(OutputType older, OutputType newer) {
    Objects.requireNonNull(older, "older");
    Objects.requireNonNull(newer, "newer");
    if (older.equals(newer)) {
      return true;
    }
    if (older.isInteger()) {
      if (newer.isInteger()) {
        return integerRank(older) <= integerRank(newer);
      }
      if (newer.kind() == OutputType.Kind.DOUBLE) {
        return older.kind() != OutputType.Kind.BIGINT;
      }
      if (newer.isDecimal()) {
        return newer.precision() - newer.scale() >= integerDigits(older);
      }
      return false;
    }
    if (older.isDecimal() && newer.isDecimal()) {
      return newer.scale() >= older.scale()
          && newer.precision() - newer.scale() >= older.precision() - older.scale();
    }
    return (older.kind() == OutputType.Kind.FLOAT && newer.kind() == OutputType.Kind.DOUBLE)
        || (older.kind() == OutputType.Kind.DATE && newer.kind() == OutputType.Kind.TIMESTAMP_NTZ);
  }

  /**
   * True when a column declared {@code declared} (option {@code columns}, the user's own
   * conversion) takes every value of a captured column of SQL Server type {@code captured}, cast by
   * {@link ValueConverter} without failing. With {@code O} the type {@code captured} maps to by
   * default ({@link TypeMapping}):
   *
   * <ul>
   *   <li>{@code STRING} holds everything (a value's canonical text);
   *   <li>{@code declared} holds {@code O} when {@link #fits(OutputType, OutputType) fits(O,
   *       declared)};
   *   <li>{@code DOUBLE} holds every number and {@code bit} (the nearest binary value; these types
   *       are approximate), {@code FLOAT} every one but {@code DOUBLE} (which can exceed it);
   *   <li>an integer, or a decimal with an integer digit, holds {@code bit} (1 or 0);
   *   <li>{@code TIMESTAMP} holds {@code DATE} and {@code TIMESTAMP_NTZ} (read as UTC); {@code
   *       TIMESTAMP_NTZ} and {@code DATE} hold {@code TIMESTAMP} (its UTC time or date); {@code
   *       DATE} holds {@code TIMESTAMP_NTZ} (its date, as SQL Server's and Spark's casts do);
   *   <li>{@code BINARY} holds the character types ({@code char}, {@code varchar}, {@code nchar},
   *       {@code nvarchar}, {@code text}, {@code ntext}, {@code sysname}, {@code xml}: UTF-8
   *       bytes).
   * </ul>
   *
   * Nothing else holds: a narrower integer or decimal, text read as a number, a date or a boolean
   * ({@code INT} cannot hold {@code char(1)}), a number read as a boolean or a date. A type without
   * a default mapping ({@code sql_variant}, {@code hierarchyid}, ...) is held by any declared type:
   * its values are the user's to convert.
   *
   * @param declared the declared output type
   * @param captured the captured column's SQL Server type
   * @return whether every value of {@code captured} converts to {@code declared}
   */
  public static boolean holds(OutputType declared, SqlServerType captured) {
    Objects.requireNonNull(declared, "declared");
    Objects.requireNonNull(captured, "captured");
    OutputType mapped;
    try {
      mapped = TypeMapping.outputType("column", captured);
    } catch (IllegalArgumentException e) {
      return true;
    }
    if (declared.kind() == OutputType.Kind.STRING || fits(mapped, declared)) {
      return true;
    }
    boolean number =
        mapped.isInteger()
            || mapped.isDecimal()
            || mapped.kind() == OutputType.Kind.FLOAT
            || mapped.kind() == OutputType.Kind.DOUBLE
            || mapped.kind() == OutputType.Kind.BOOLEAN;
    switch (declared.kind()) {
      case DOUBLE:
        return number;
      case FLOAT:
        return number && mapped.kind() != OutputType.Kind.DOUBLE;
      case SMALLINT:
      case INT:
      case BIGINT:
        return mapped.kind() == OutputType.Kind.BOOLEAN;
      case DECIMAL:
        return mapped.kind() == OutputType.Kind.BOOLEAN
            && declared.precision() - declared.scale() >= 1;
      case TIMESTAMP:
        return mapped.kind() == OutputType.Kind.DATE
            || mapped.kind() == OutputType.Kind.TIMESTAMP_NTZ;
      case TIMESTAMP_NTZ:
        return mapped.kind() == OutputType.Kind.TIMESTAMP;
      case DATE:
        return mapped.kind() == OutputType.Kind.TIMESTAMP
            || mapped.kind() == OutputType.Kind.TIMESTAMP_NTZ;
      case BINARY:
        return CHARACTER_TYPES.contains(captured.name());
      default:
        return false;
    }
  }

  /** SQL Server's character types, whose text BINARY holds as UTF-8 bytes. */
  private static final java.util.Set<String> CHARACTER_TYPES =
      java.util.Set.of("char", "varchar", "nchar", "nvarchar", "text", "ntext", "sysname", "xml");

  private static int integerRank(OutputType type) {
    switch (type.kind()) {
      case SMALLINT:
        return 1;
      case INT:
        return 2;
      default:
        return 3;
    }
  }

  /** Integer digits of Spark's decimal for the integer type: DECIMAL(5,0), (10,0), (20,0). */
  private static int integerDigits(OutputType type) {
    switch (type.kind()) {
      case SMALLINT:
        return 5;
      case INT:
        return 10;
      default:
        return 20;
    }
  }
}
