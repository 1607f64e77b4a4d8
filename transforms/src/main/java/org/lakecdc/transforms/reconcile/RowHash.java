package org.lakecdc.transforms.reconcile;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The canonical row hash reconcile's tier 2 computes on both sides (docs/behaviour.md §11.2),
 * defined here once. The source's values are first cast to silver's column types exactly as bronze
 * stores them ({@code ValueConverter.toBeamValue}: decimals at the column's scale, {@code
 * datetime2(7)} truncated to microseconds, ...); silver's are Delta Kernel's values of the same
 * types. Then:
 *
 * <ul>
 *   <li><b>Columns</b>: silver's captured columns in silver's order, computed columns left out;
 *   <li><b>Canonical text</b> of one value ({@link #canonical}): NULL is {@code \N}; Boolean {@code
 *       true}/{@code false}; integers in decimal; Float/Double by {@code Float.toString}/{@code
 *       Double.toString}; BigDecimal {@code toPlainString} (scale kept); LocalDate {@code
 *       2026-10-01}; LocalDateTime {@code 2026-10-01T09:00:00.123456} (always six fraction digits,
 *       truncated to microseconds); Instant the same in UTC with {@code Z}; byte[] {@code 0x} and
 *       upper-case hex; String as is;
 *   <li><b>Row hash</b> ({@link #of}): SHA-256 over, per column, the UTF-8 length (4 bytes,
 *       big-endian) then the UTF-8 bytes of its canonical text; and per column the first 8 bytes of
 *       the SHA-256 of its canonical text, which name the columns that differ ({@link
 *       Digest#differingColumns}).
 * </ul>
 *
 * A NULL and the text {@code \N} hash alike only in a column that holds both strings and NULLs,
 * which the length prefix and the per-column digests make no less rare than a SHA-256 collision of
 * real values.
 */
public final class RowHash {
  /** The canonical text of NULL. */
  public static final String NULL = "\\N";

  private static final DateTimeFormatter MICROS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private RowHash() {}

  /**
   * One value's canonical text (rules in the class comment).
   *
   * @param value a Beam value of an output type, or null
   * @return the text
   */
  public static String canonical(@Nullable Object value) {
    if (value == null) {
      return NULL;
    }
    if (value instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (value instanceof LocalDateTime t) {
      return MICROS.format(t.truncatedTo(ChronoUnit.MICROS));
    }
    if (value instanceof Instant i) {
      return MICROS.format(
              LocalDateTime.ofInstant(i.truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC))
          + "Z";
    }
    if (value instanceof LocalDate d) {
      return d.toString();
    }
    if (value instanceof byte[] b) {
      char[] out = new char[2 + 2 * b.length];
      out[0] = '0';
      out[1] = 'x';
      for (int i = 0; i < b.length; i++) {
        out[2 + 2 * i] = HEX[(b[i] >> 4) & 0xF];
        out[3 + 2 * i] = HEX[b[i] & 0xF];
      }
      return new String(out);
    }
    return value.toString();
  }

  /**
   * The digest of one row.
   *
   * @param values the row's values in the compared columns' order (nulls allowed)
   * @return the row hash and the per-column digests
   */
  public static Digest of(List<?> values) {
    MessageDigest row = sha256();
    MessageDigest column = sha256();
    long[] columns = new long[values.size()];
    for (int i = 0; i < columns.length; i++) {
      byte[] text = canonical(values.get(i)).getBytes(StandardCharsets.UTF_8);
      row.update(ByteBuffer.allocate(4).putInt(text.length).array());
      row.update(text);
      columns[i] = ByteBuffer.wrap(column.digest(text)).getLong();
    }
    return new Digest(row.digest(), columns);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("The JVM has no SHA-256", e);
    }
  }

  /**
   * A row's hash and column digests.
   *
   * @param row the SHA-256 row hash (32 bytes)
   * @param columns one digest per compared column, in order
   */
  public record Digest(byte[] row, long[] columns) {
    /**
     * Whether two rows are equal: their row hashes are.
     *
     * @param other the other side's digest
     * @return true when equal
     */
    public boolean matches(Digest other) {
      return Arrays.equals(row, other.row);
    }

    /**
     * The columns whose values differ.
     *
     * @param names the compared columns' names, in digest order
     * @param other the other side's digest
     * @return the names, in column order
     */
    public List<String> differingColumns(List<String> names, Digest other) {
      List<String> out = new java.util.ArrayList<>();
      for (int i = 0; i < columns.length; i++) {
        if (columns[i] != other.columns[i]) {
          out.add(names.get(i));
        }
      }
      return out;
    }

    /** The row hash as 64 lower-case hex digits. */
    public String rowHex() {
      StringBuilder sb = new StringBuilder();
      for (byte b : row) {
        sb.append(String.format("%02x", b));
      }
      return sb.toString();
    }
  }
}
