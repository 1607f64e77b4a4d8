package org.lakecdc.io.mssqlcdc.lsn;

import java.io.Serializable;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.regex.Pattern;
import org.apache.beam.sdk.coders.Coder;

/**
 * A SQL Server log sequence number as CDC exposes it: the {@code binary(10)} value of {@code
 * __$start_lsn}, {@code __$seqval}, {@code cdc.lsn_time_mapping.start_lsn} and the {@code
 * sys.fn_cdc_*} functions.
 *
 * <p>Shape: exactly 10 bytes, ordered as an unsigned big-endian number (SQL Server compares {@code
 * binary} values byte by byte, unsigned). The canonical text is {@code 0x} followed by 20
 * upper-case hexadecimal digits, e.g. {@code 0x0000002A000001000001}; it is fixed-width, so the
 * order of the texts equals the order of the LSNs. That text is how an LSN crosses every boundary
 * of this project (T-SQL parameters, JSON files, offsets, Delta domain metadata).
 *
 * <p>Instances are immutable: the bytes are copied in and copied out. {@link #parse(String)} is the
 * only lenient entry point (for values this project reads from SQL Server itself); what a user or a
 * file gives goes through {@link #parseCanonical(String)}. {@link #toString()} always gives the
 * canonical text.
 */
public final class Lsn implements Comparable<Lsn>, Serializable {
  private static final long serialVersionUID = 1L;

  /** Number of bytes of an LSN ({@code binary(10)}). */
  public static final int BYTES = 10;

  private static final BigInteger LIMIT = BigInteger.ONE.shiftLeft(8 * BYTES);
  private static final Pattern HEX = Pattern.compile("[0-9A-Fa-f]{1,20}");
  private static final Pattern CANONICAL = Pattern.compile("0[xX][0-9A-Fa-f]{20}");
  private static final byte[] UPPER_HEX_DIGITS =
      "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

  /** {@code 0x00000000000000000000}: what SQL Server returns for "no LSN" from some functions. */
  public static final Lsn ZERO = new Lsn(new byte[BYTES]);

  /** {@code 0xFFFFFFFFFFFFFFFFFFFF}: the largest LSN, used as the open end of a restriction. */
  public static final Lsn MAX = fromBigInteger(LIMIT.subtract(BigInteger.ONE));

  private final byte[] bytes;

  /**
   * The canonical text, made on the first {@link #toString()}: the change rows of one commit share
   * one start LSN, whose text each of them carries ({@code _start_lsn}). A racy cache of an
   * immutable {@link String}, so safe without a lock.
   */
  private transient String text;

  private Lsn(byte[] bytes) {
    this.bytes = bytes;
  }

  /**
   * Parses an LSN text leniently: surrounding whitespace is ignored, the {@code 0x}/{@code 0X}
   * prefix is optional, hex digits may be of any case, and fewer than 20 digits are left-padded
   * with zeros ({@code "2A"} is {@code 0x0000000000000000002A}).
   *
   * @param text the LSN text
   * @return the LSN
   * @throws IllegalArgumentException {@code Invalid LSN: '<text>'} for anything else (null, empty,
   *     non-hex characters, more than 20 digits)
   */
  public static Lsn parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("Invalid LSN: null");
    }
    String digits = text.strip();
    if (digits.startsWith("0x") || digits.startsWith("0X")) {
      digits = digits.substring(2);
    }
    if (!HEX.matcher(digits).matches()) {
      throw new IllegalArgumentException(
          "Invalid LSN: '"
              + text
              + "' (expected 0x followed by up to 20 hexadecimal digits, e.g."
              + " 0x0000002A000001000001)");
    }
    String padded = "0".repeat(2 * BYTES - digits.length()) + digits;
    return new Lsn(HexFormat.of().parseHex(padded));
  }

  /**
   * Parses the canonical text only: {@code 0x} (or {@code 0X}) followed by exactly 20 hexadecimal
   * digits of any case, nothing around them. For values a user or a file gives: a shorter text has
   * no single meaning (this class's {@link #parse} pads it on the left, SQL Server's {@code
   * CONVERT(binary(10), '0x2A', 1)} pads it on the right, to {@code 0x2A000000000000000000}), so it
   * is refused rather than guessed.
   *
   * @param text the LSN text
   * @return the LSN
   * @throws IllegalArgumentException {@code Invalid LSN: '<text>' (expected 0x followed by exactly
   *     20 hexadecimal digits, e.g. 0x0000002A000001000001)} for anything else
   */
  public static Lsn parseCanonical(String text) {
    if (text == null || !CANONICAL.matcher(text).matches()) {
      throw new IllegalArgumentException(
          "Invalid LSN: "
              + (text == null ? "null" : "'" + text + "'")
              + " (expected 0x followed by exactly 20 hexadecimal digits, e.g."
              + " 0x0000002A000001000001)");
    }
    return new Lsn(HexFormat.of().parseHex(text.substring(2)));
  }

  /**
   * Wraps the 10 raw bytes of a {@code binary(10)} LSN (copied).
   *
   * @throws IllegalArgumentException {@code LSN must be 10 bytes, got N} for any other length
   */
  public static Lsn ofBytes(byte[] raw) {
    if (raw == null || raw.length != BYTES) {
      throw new IllegalArgumentException(
          "LSN must be " + BYTES + " bytes, got " + (raw == null ? "null" : raw.length));
    }
    return new Lsn(raw.clone());
  }

  /**
   * The LSN whose unsigned big-endian value is {@code value}.
   *
   * @throws IllegalArgumentException when {@code value} is negative or not below 2^80
   */
  public static Lsn fromBigInteger(BigInteger value) {
    if (value.signum() < 0 || value.compareTo(LIMIT) >= 0) {
      throw new IllegalArgumentException("LSN value out of range [0, 2^80): " + value);
    }
    byte[] magnitude = value.toByteArray();
    byte[] out = new byte[BYTES];
    int copy = Math.min(magnitude.length, BYTES);
    System.arraycopy(magnitude, magnitude.length - copy, out, BYTES - copy, copy);
    return new Lsn(out);
  }

  /** The unsigned value of the 10 bytes, in {@code [0, 2^80)}; for arithmetic and estimates. */
  public BigInteger toBigInteger() {
    return new BigInteger(1, bytes);
  }

  /** A copy of the 10 bytes, big-endian. */
  public byte[] toBytes() {
    return bytes.clone();
  }

  /**
   * The next LSN, as {@code sys.fn_cdc_increment_lsn} computes it: the 80-bit value plus one.
   * Change rows have {@code __$start_lsn} at commit LSNs, so {@code [increment(l), ...]} is
   * everything strictly after {@code l}.
   *
   * @throws IllegalStateException when called on {@link #MAX}
   */
  public Lsn increment() {
    if (equals(MAX)) {
      throw new IllegalStateException("Cannot increment the largest LSN " + this);
    }
    return fromBigInteger(toBigInteger().add(BigInteger.ONE));
  }

  /**
   * The previous LSN, as {@code sys.fn_cdc_decrement_lsn} computes it: the 80-bit value minus one;
   * {@link #ZERO} stays {@link #ZERO}.
   */
  public Lsn decrement() {
    if (equals(ZERO)) {
      return ZERO;
    }
    return fromBigInteger(toBigInteger().subtract(BigInteger.ONE));
  }

  /** True for {@link #ZERO}, which SQL Server's CDC functions return for "none". */
  public boolean isZero() {
    return equals(ZERO);
  }

  /** The smaller of two LSNs. */
  public static Lsn min(Lsn a, Lsn b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** The larger of two LSNs. */
  public static Lsn max(Lsn a, Lsn b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** Unsigned big-endian comparison, as SQL Server orders {@code binary(10)}. */
  @Override
  public int compareTo(Lsn other) {
    return Arrays.compareUnsigned(bytes, other.bytes);
  }

  /** True when this LSN is strictly before {@code other}. */
  public boolean isBefore(Lsn other) {
    return compareTo(other) < 0;
  }

  /** True when this LSN is strictly after {@code other}. */
  public boolean isAfter(Lsn other) {
    return compareTo(other) > 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Lsn && Arrays.equals(bytes, ((Lsn) o).bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  /** The canonical text: {@code 0x} followed by 20 upper-case hex digits. */
  @Override
  public String toString() {
    String t = text;
    if (t == null) {
      byte[] chars = new byte[2 + 2 * BYTES];
      chars[0] = '0';
      chars[1] = 'x';
      for (int i = 0; i < BYTES; i++) {
        int b = bytes[i] & 0xFF;
        chars[2 + 2 * i] = UPPER_HEX_DIGITS[b >>> 4];
        chars[3 + 2 * i] = UPPER_HEX_DIGITS[b & 0xF];
      }
      t = new String(chars, StandardCharsets.ISO_8859_1);
      text = t;
    }
    return t;
  }

  /**
   * The Beam coder of LSNs: the 10 raw bytes, big-endian, no length prefix. Deterministic, so LSNs
   * can be keys; the encoded bytes sort in LSN order.
   *
   * @return the coder
   */
  public static Coder<Lsn> coder() {
    return LsnCoder.of();
  }
}
