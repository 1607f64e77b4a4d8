package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.LookAheadIterator;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The change rows of one {@code readChanges} call, read from a change table file ({@link
 * ChangeLines}) with one streaming parse per line straight into typed values: no JSON tree, each
 * LSN parsed once from the parser's characters (a commit's rows share their start LSN's object),
 * each captured value converted once ({@link SqlValues#fromScalar}).
 *
 * <p>A line of the shape the writer writes (one object; the metadata fields as strings and
 * integers; every other value a string, an integer, a boolean or null; captured columns named
 * exactly; no field twice) takes that path. Any other line, a malformed one included, is read the
 * general way, as a {@link JsonNode} with {@link FakeFormat}'s field readers, so it gives the same
 * row or raises the same error as before: {@code <file>:<line>: invalid JSON: …}, {@code expected a
 * JSON object}, a missing or invalid field, a value that does not fit its column.
 *
 * <p>Errors: {@link CdcException} naming the file and line (rows out of order, unmapped rows below
 * the mapping's last LSN, bad fields and values); {@link UncheckedIOException} when the file cannot
 * be read or is not UTF-8.
 */
final class ChangeTableReader extends LookAheadIterator<ChangeRow> {
  /** What the reader does with a row whose start LSN has no mapping row. */
  interface Unmapped {
    /**
     * Refuses (throws) or accepts (returns) an unmapped start LSN read at {@code where}.
     *
     * @throws CdcException when the row cannot be a commit in progress
     */
    void check(Lsn start, String where);
  }

  private static final JsonFactory FACTORY = FakeFormat.MAPPER.getFactory();

  /** What {@link #shortInteger} returns for an integer token of more than nine digits. */
  private static final long NOT_SHORT = Long.MIN_VALUE;

  private final ChangeLines lines;
  private final ChangeQuery query;
  private final Map<Lsn, Instant> times;
  private final Unmapped unmapped;
  private final List<Catalog.Captured> columns;
  private final SqlValues.Family[] families;

  /** Requested captured column name to its position; null when only the general path reads. */
  private final Map<String, Integer> slots;

  /** Lower-case names of the requested columns: a field matching one only ignoring case. */
  private final Set<String> lowerNames;

  private final Object[] raw;
  private final boolean[] seen;
  private final char[] previousStartText = new char[2 + 2 * Lsn.BYTES];
  private Lsn previousStart;

  // The current line's metadata, as the fast path read it.
  private Lsn start;
  private Lsn seqval;
  private int operation;
  private Integer commandId;

  private OrderKey previous;

  /** The bytes of the line {@link #fedParse} reads, as the input of {@link #fed}. */
  private final LineFeed feed = new LineFeed();

  /** The parser over the lines ({@link #fedParse}); null before the first line and once dropped. */
  private JsonParser fed;

  ChangeTableReader(
      ChangeLines lines,
      ChangeQuery query,
      List<Catalog.Captured> columns,
      Map<Lsn, Instant> times,
      Unmapped unmapped) {
    this.lines = lines;
    this.query = query;
    this.times = times;
    this.unmapped = unmapped;
    this.columns = columns;
    this.families = new SqlValues.Family[columns.size()];
    this.raw = new Object[columns.size()];
    this.seen = new boolean[columns.size()];
    Map<String, Integer> bySlot = new HashMap<>();
    Set<String> lower = new HashSet<>();
    boolean fast = true;
    for (int i = 0; i < columns.size(); i++) {
      Catalog.Captured c = columns.get(i);
      if (c == null) {
        continue;
      }
      try {
        families[i] = SqlValues.family(c.type());
      } catch (IllegalArgumentException e) {
        // An unknown type fails per value on the general path, as it always did.
        fast = false;
      }
      fast &= bySlot.put(c.name(), i) == null && lower.add(c.name().toLowerCase(Locale.ROOT));
    }
    this.slots = fast ? bySlot : null;
    this.lowerNames = lower;
  }

  @Override
  protected ChangeRow computeNext() {
    if (!lines.next()) {
      finish();
      return null;
    }
    return read();
  }

  @Override
  protected void release() {
    dropFed();
    lines.close();
  }

  /** The current line's row; null to skip it (and {@link #finish} once past the range). */
  private ChangeRow read() {
    byte[] bytes = lines.bytes();
    int offset = lines.offset();
    int length = lines.length();
    int first = offset;
    int end = offset + length;
    while (first < end && asciiWhitespace(bytes[first])) {
      first++;
    }
    if (first == end) {
      return null;
    }
    if (bytes[first] == '{' && slots != null) {
      if (!lines.ascii()) {
        // Skipped fields are not decoded by the parse: check the whole line is UTF-8 first.
        decode(bytes, offset, length);
      }
      if (fedParse(bytes, offset, length) || fastParse(bytes, offset, length)) {
        return row(start, seqval, operation, commandId, raw, null);
      }
    }
    return general(bytes, offset, length);
  }

  private String decode(byte[] bytes, int offset, int length) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes, offset, length))
          .toString();
    } catch (CharacterCodingException e) {
      throw new UncheckedIOException("Cannot read " + lines.where() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Applies the order check and the range to a parsed line and converts its values; null to skip
   * it. {@code node} is the general path's object, whose fields give the values; else {@code
   * values} holds the fast path's scalars.
   */
  private ChangeRow row(
      Lsn start, Lsn seqval, int operation, Integer commandId, Object[] values, JsonNode node) {
    OrderKey key = new OrderKey(start, commandId, seqval, operation);
    if (previous != null && key.compareTo(previous) < 0) {
      throw new CdcException(
          lines.where()
              + ": change rows must be sorted by __$start_lsn, __$command_id, __$seqval,"
              + " __$operation");
    }
    previous = key;
    if (start.isAfter(query.toLsn())) {
      finish();
      return null;
    }
    Instant time = times.get(start);
    if (time == null) {
      unmapped.check(start, lines.where());
      return null;
    }
    if (start.isBefore(query.fromLsn())) {
      return null;
    }
    List<Object> out = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      Catalog.Captured c = columns.get(i);
      if (c == null) {
        out.add(null);
      } else if (node != null) {
        out.add(value(node, c.name(), c.type()));
      } else {
        try {
          out.add(
              SqlValues.readerValue(
                  SqlValues.fromScalar(c.name(), c.type(), families[i], values[i])));
        } catch (IllegalArgumentException e) {
          throw new CdcException(lines.where() + ": " + e.getMessage(), e);
        }
      }
    }
    return new ChangeRow(
        start, seqval, operation, query.includeCommandId() ? commandId : null, time, out);
  }

  private Object value(JsonNode row, String name, SqlServerType type) {
    try {
      return SqlValues.readerValue(SqlValues.fromJson(name, type, FakeSqlServer.field(row, name)));
    } catch (IllegalArgumentException e) {
      throw new CdcException(lines.where() + ": " + e.getMessage(), e);
    }
  }

  /** A line read as a tree, as every line was read before the fast path. */
  private ChangeRow general(byte[] bytes, int offset, int length) {
    String line = decode(bytes, offset, length);
    if (line.isBlank()) {
      return null;
    }
    JsonNode n;
    try {
      n = FakeFormat.MAPPER.readTree(line);
    } catch (JsonProcessingException e) {
      throw new CdcException(lines.where() + ": invalid JSON: " + e.getOriginalMessage(), e);
    }
    if (!n.isObject()) {
      throw new CdcException(lines.where() + ": expected a JSON object");
    }
    String where = lines.where();
    Lsn start = FakeFormat.lsn(n, FakeFormat.START_LSN, where);
    Lsn seqval = FakeFormat.lsn(n, FakeFormat.SEQVAL, where);
    int operation = FakeFormat.integer(n, FakeFormat.OPERATION, where);
    Integer commandId = FakeFormat.optionalInt(n, FakeFormat.COMMAND_ID);
    return row(start, seqval, operation, commandId, null, n);
  }

  /**
   * Reads a line of the writer's shape into {@link #start}, {@link #seqval}, {@link #operation},
   * {@link #commandId} and {@link #raw}; false when the line has another shape (or is not valid
   * JSON), for the general path to read.
   */
  private boolean fastParse(byte[] bytes, int offset, int length) {
    try (JsonParser p = FACTORY.createParser(bytes, offset, length)) {
      return p.nextToken() == JsonToken.START_OBJECT && fields(p);
    } catch (IOException e) {
      // Not valid JSON: the general path raises the error as it always did.
      return false;
    }
  }

  /**
   * {@link #fastParse} with the reader's one parser over the lines, each line's bytes handed to it
   * as the next root value ({@link LineFeed}), so that no parser is made per line. True only when
   * the line is one object of the writer's shape and the parser read exactly the line; on any other
   * outcome (another shape, invalid or incomplete JSON, anything after the object) the parser is
   * dropped and false returned, for {@link #fastParse} to read the line as a parser of its own
   * reads it (the same row or the same error as before).
   */
  private boolean fedParse(byte[] bytes, int offset, int length) {
    feed.offer(bytes, offset, length);
    try {
      if (fed == null) {
        // Made once the first line is offered: the parser reads its first bytes when made.
        fed = FACTORY.createParser(feed);
      }
      if (fed.nextToken() == JsonToken.START_OBJECT
          && fields(fed)
          && fed.currentToken() == JsonToken.END_OBJECT
          && feed.drained()
          && fed.releaseBuffered(OutputStream.nullOutputStream()) == 0) {
        return true;
      }
    } catch (IOException e) {
      // Dropped below; the line's own parser reads it.
    }
    dropFed();
    return false;
  }

  private void dropFed() {
    if (fed != null) {
      try {
        fed.close();
      } catch (IOException e) {
        // Closing reads nothing: the feed holds the lines' bytes in memory.
      }
      fed = null;
    }
  }

  /** The fields of the object whose start {@code p} is at, as {@link #fastParse} reads them. */
  private boolean fields(JsonParser p) throws IOException {
    Arrays.fill(raw, null);
    Arrays.fill(seen, false);
    start = null;
    seqval = null;
    boolean hasOperation = false;
    boolean hasCommandId = false;
    commandId = null;
    String field;
    while ((field = p.nextFieldName()) != null) {
      JsonToken token = p.nextToken();
      // An integer's digits read once, here: one copy of the read in the compiled parse.
      long small = token == JsonToken.VALUE_NUMBER_INT ? shortInteger(p) : NOT_SHORT;
      switch (field) {
        case FakeFormat.START_LSN:
          if (start != null || token != JsonToken.VALUE_STRING) {
            return false;
          }
          start = startLsn(p);
          if (start == null) {
            return false;
          }
          break;
        case FakeFormat.SEQVAL:
          if (seqval != null || token != JsonToken.VALUE_STRING) {
            return false;
          }
          seqval =
              FakeFormat.canonicalLsn(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
          if (seqval == null) {
            return false;
          }
          break;
        case FakeFormat.OPERATION:
          if (hasOperation || !isInt(p, token, small)) {
            return false;
          }
          operation = intValue(p, small);
          hasOperation = true;
          break;
        case FakeFormat.COMMAND_ID:
          if (hasCommandId) {
            return false;
          }
          hasCommandId = true;
          if (isInt(p, token, small)) {
            commandId = intValue(p, small);
          } else if (token != JsonToken.VALUE_NULL) {
            return false;
          }
          break;
        default:
          Integer slot = slots.get(field);
          if (slot == null) {
            if (lowerNames.contains(field.toLowerCase(Locale.ROOT))) {
              return false;
            }
            if (token.isStructStart()) {
              p.skipChildren();
            }
            break;
          }
          if (seen[slot]) {
            return false;
          }
          seen[slot] = true;
          switch (token) {
            case VALUE_NULL:
              break;
            case VALUE_STRING:
              raw[slot] = p.getText();
              break;
            case VALUE_TRUE:
              raw[slot] = Boolean.TRUE;
              break;
            case VALUE_FALSE:
              raw[slot] = Boolean.FALSE;
              break;
            case VALUE_NUMBER_INT:
              if (small != NOT_SHORT) {
                raw[slot] = small;
                break;
              }
              JsonParser.NumberType type = p.getNumberType();
              if (type != JsonParser.NumberType.INT && type != JsonParser.NumberType.LONG) {
                return false;
              }
              raw[slot] = p.getLongValue();
              break;
            default:
              return false;
          }
      }
    }
    return start != null && seqval != null && hasOperation;
  }

  /** Whether the token is a Java {@code int}; {@code small} is its {@link #shortInteger}. */
  private static boolean isInt(JsonParser p, JsonToken token, long small) throws IOException {
    return token == JsonToken.VALUE_NUMBER_INT
        && (small != NOT_SHORT || p.getNumberType() == JsonParser.NumberType.INT);
  }

  /** The value of an integer token that {@link #isInt} accepted. */
  private static int intValue(JsonParser p, long small) throws IOException {
    return small != NOT_SHORT ? (int) small : p.getIntValue();
  }

  /**
   * The value of the integer token at {@code p} when it has at most nine digits (so it is a Java
   * {@code int}, as Jackson reads it), read from the token's characters; {@link #NOT_SHORT} for a
   * longer one, which Jackson then reads. Jackson's own read ({@code NumberInput.parseInt})
   * branches on the number of digits, and its compiled code, made while the keys had six digits,
   * was thrown away and compiled again (with the whole parse it was inlined in) when they reached
   * seven.
   */
  private static long shortInteger(JsonParser p) throws IOException {
    char[] text = p.getTextCharacters();
    int i = p.getTextOffset();
    int end = i + p.getTextLength();
    boolean negative = i < end && text[i] == '-';
    if (negative) {
      i++;
    }
    if (end - i < 1 || end - i > 9) {
      return NOT_SHORT;
    }
    long value = 0;
    for (; i < end; i++) {
      value = value * 10 + (text[i] - '0');
    }
    return negative ? -value : value;
  }

  /** The start LSN at the parser, the previous row's object when its text is the same. */
  private Lsn startLsn(JsonParser p) throws IOException {
    char[] text = p.getTextCharacters();
    int from = p.getTextOffset();
    int length = p.getTextLength();
    if (previousStart != null
        && length == previousStartText.length
        && Arrays.equals(
            text, from, from + length, previousStartText, 0, previousStartText.length)) {
      return previousStart;
    }
    Lsn lsn = FakeFormat.canonicalLsn(text, from, length);
    if (lsn != null) {
      System.arraycopy(text, from, previousStartText, 0, length);
      previousStart = lsn;
    }
    return lsn;
  }

  private static boolean asciiWhitespace(byte b) {
    return b == ' ' || (b >= 0x09 && b <= 0x0d) || (b >= 0x1c && b <= 0x1f);
  }

  /**
   * The input of the parser over the lines: the bytes of the line offered last, then the end of
   * input until the next line is offered. The parser asks for more only when it has used all it
   * holds, so between two lines it holds nothing and asks for nothing; a line it has not finished
   * when the line runs out (an incomplete object) meets the end of input, and the parser is
   * dropped.
   */
  private static final class LineFeed extends InputStream {
    private byte[] bytes;
    private int position;
    private int end;

    void offer(byte[] bytes, int offset, int length) {
      this.bytes = bytes;
      this.position = offset;
      this.end = offset + length;
    }

    /** Whether every byte of the line has been read. */
    boolean drained() {
      return position == end;
    }

    @Override
    public int read() {
      return position < end ? bytes[position++] & 0xff : -1;
    }

    @Override
    public int read(byte[] into, int offset, int length) {
      if (length == 0) {
        return 0;
      }
      if (position >= end) {
        return -1;
      }
      int n = Math.min(length, end - position);
      System.arraycopy(bytes, position, into, offset, n);
      position += n;
      return n;
    }
  }
}
