package org.lakecdc.io.mssqlcdc.schema;

import java.util.Objects;

/**
 * The compatibility rule between output types (docs/tables.md "Schema evolution of bronze"):
 * whether every value of one type fits another unchanged. Used to merge the capture instances of a
 * table (the newer instance's type wins when the older one fits it, 5.3) and to check that a
 * query's type still holds a captured type after DDL ({@code fits(capturedNew, expected)}, 3.4 to
 * 3.6).
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
