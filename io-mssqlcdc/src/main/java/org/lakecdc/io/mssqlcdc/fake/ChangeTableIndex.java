package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * An index of one change table file ({@code cdc.<ci>_CT.jsonl}) by {@code __$start_lsn}, built by
 * parsing the file once and extended by parsing only what a later version appends. Immutable; the
 * reader's cache ({@link ReaderCache}) keeps the newest per file.
 *
 * <p>One group per run of lines with the same {@code __$start_lsn} (a commit's rows, which the file
 * keeps together in order): its LSN, the line number of its first row, the byte offset and line
 * number of its last row, and the number of rows before it. The index takes lines ended by {@code
 * \n} only (an unended last line is left for the next version) and stops before the first line it
 * cannot take: one that is not a JSON object, lacks a valid {@code __$start_lsn}, {@code __$seqval}
 * or {@code __$operation}, holds a {@code \r}, or is out of the order {@code (__$start_lsn,
 * __$command_id, __$seqval, __$operation)}. Readers parse from {@link #end()} on as the file's full
 * reader does, so that line raises its error exactly where a scan from the start would.
 *
 * <p>A later version of the file extends this index when it is at least as long and its first and
 * last {@value #WINDOW} bytes up to {@link #end()} are unchanged (the writer only appends, or
 * rewrites the file after a cleanup or a drop, which changes those bytes: every change row is a
 * distinct line); otherwise it is indexed afresh.
 */
final class ChangeTableIndex {
  /** The change-table columns an index entry is built from. */
  private static final Set<String> METADATA_FIELDS =
      Set.of(FakeFormat.START_LSN, FakeFormat.SEQVAL, FakeFormat.OPERATION, FakeFormat.COMMAND_ID);

  /** Bytes compared at each end of the indexed part to tell an append from a rewrite. */
  static final int WINDOW = 4096;

  private static final int BUFFER = 1 << 20;

  /** The stamp of the file version indexed. */
  final FileStamp stamp;

  private final int groups;
  private final Lsn[] lsns;
  private final int[] firstLines;
  private final long[] lastOffsets;
  private final int[] lastLines;

  /** Rows before each group; {@code rowsBefore[groups]} is the total. */
  private final long[] rowsBefore;

  private final long end;
  private final int linesBeforeEnd;
  private final boolean stopped;
  private final OrderKey lastKey;
  private final byte[] head;
  private final byte[] tail;

  /** The first group that is unmapped below the mapping's last LSN, per mapping; see #firstBad. */
  private volatile BadGroup badGroup;

  private record BadGroup(ReaderCache.Mapping mapping, int group) {}

  private ChangeTableIndex(Builder b, FileStamp stamp, byte[] head, byte[] tail) {
    this.stamp = stamp;
    this.groups = b.groups;
    this.lsns = Arrays.copyOf(b.lsns, b.groups);
    this.firstLines = Arrays.copyOf(b.firstLines, b.groups);
    this.lastOffsets = Arrays.copyOf(b.lastOffsets, b.groups);
    this.lastLines = Arrays.copyOf(b.lastLines, b.groups);
    this.rowsBefore = Arrays.copyOf(b.rowsBefore, b.groups + 1);
    this.rowsBefore[b.groups] = b.rows;
    this.end = b.end;
    this.linesBeforeEnd = b.lines;
    this.stopped = b.stopped;
    this.lastKey = b.lastKey;
    this.head = head;
    this.tail = tail;
  }

  /** The number of groups (distinct start LSNs indexed). */
  int groups() {
    return groups;
  }

  /** The start LSN of group {@code g}. */
  Lsn lsn(int g) {
    return lsns[g];
  }

  /** The number of rows of group {@code g}. */
  long rows(int g) {
    return rowsBefore[g + 1] - rowsBefore[g];
  }

  /** The 1-based line number of group {@code g}'s first row. */
  int firstLine(int g) {
    return firstLines[g];
  }

  /** The byte offset after the last line indexed: the first line the index could not take. */
  long end() {
    return end;
  }

  /**
   * True when the index holds every line of the file version it stamps: no line stopped it and the
   * file ends with a complete line.
   */
  boolean complete() {
    return !stopped && end == stamp.size();
  }

  /** The first of {@code sorted[0, size)} (ascending) at or after {@code lsn}; size when none. */
  static int firstAtOrAfter(Lsn[] sorted, int size, Lsn lsn) {
    return search(sorted, size, lsn, false);
  }

  /** The first of {@code sorted[0, size)} (ascending) after {@code lsn}; size when none. */
  static int firstAfter(Lsn[] sorted, int size, Lsn lsn) {
    return search(sorted, size, lsn, true);
  }

  private static int search(Lsn[] sorted, int size, Lsn lsn, boolean after) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = sorted[mid].compareTo(lsn);
      if (c < 0 || (after && c == 0)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** The first group whose LSN is at or after {@code lsn}; {@link #groups()} when none. */
  int firstAtOrAfter(Lsn lsn) {
    return firstAtOrAfter(lsns, groups, lsn);
  }

  /** The first group whose LSN is after {@code lsn}; {@link #groups()} when none. */
  int firstAfter(Lsn lsn) {
    return firstAfter(lsns, groups, lsn);
  }

  /** The rows of groups {@code [from, to)}. */
  long rowsBetween(int from, int to) {
    return rowsBefore[to] - rowsBefore[from];
  }

  /**
   * Where a reader starts so that it meets every line a scan from the start would act on before
   * group {@code g}: the offset and line count before the last row of group {@code g - 1} (the
   * reader re-reads that row for the order check of the next), or the file start for {@code g = 0}.
   *
   * @return {offset, lines before it}
   */
  long[] seekBefore(int g) {
    return g == 0 ? new long[] {0, 0} : new long[] {lastOffsets[g - 1], lastLines[g - 1] - 1};
  }

  /**
   * The first group whose start LSN has no mapping row and lies below the mapping's last LSN (a
   * writer stopped part-way through: readers refuse it), or {@link #groups()} when none. Computed
   * once per mapping version.
   */
  int firstBad(ReaderCache.Mapping mapping, Map<Lsn, ?> times, Lsn maxMapped) {
    BadGroup memo = badGroup;
    if (memo != null && memo.mapping() == mapping) {
      return memo.group();
    }
    int g = 0;
    if (maxMapped != null) {
      while (g < groups && !(lsns[g].isBefore(maxMapped) && !times.containsKey(lsns[g]))) {
        g++;
      }
    } else {
      g = groups;
    }
    badGroup = new BadGroup(mapping, g);
    return g;
  }

  // ---- building -------------------------------------------------------------------------------

  /**
   * Indexes a version of the file: extends {@code previous} when the version only appended to it,
   * else from the start.
   *
   * @param previous the index of an earlier version, or null
   * @param file the change table file
   * @param stamp the stamp of the version to index, taken just before opening it; its size bounds
   *     what is read
   * @param channel the version, open (the caller checked that the path still has this stamp)
   * @throws UncheckedIOException when the file cannot be read
   */
  static ChangeTableIndex index(
      ChangeTableIndex previous, Path file, FileStamp stamp, FileChannel channel)
      throws IOException {
    Builder b = null;
    if (previous != null && stamp.size() >= previous.end && previous.windowsMatch(channel)) {
      b = new Builder(previous);
    }
    if (b == null) {
      b = new Builder();
    }
    if (!b.stopped) {
      b.scan(file, channel, stamp.size());
    }
    return new ChangeTableIndex(
        b,
        stamp,
        read(channel, 0, (int) Math.min(WINDOW, b.end)),
        read(channel, Math.max(0, b.end - WINDOW), (int) Math.min(WINDOW, b.end)));
  }

  /** An index of an absent file: no rows. */
  static ChangeTableIndex absent() {
    return new ChangeTableIndex(new Builder(), FileStamp.ABSENT, new byte[0], new byte[0]);
  }

  /** Opens a file for reading; null when it does not exist. */
  static FileChannel open(Path file) {
    try {
      return FileChannel.open(file, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot open " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * True when every commit this index holds lies before {@code lsn}: a read from {@code lsn} starts
   * at the index's last row (or the file's start when it holds none).
   */
  boolean startsBefore(Lsn lsn) {
    return firstAtOrAfter(lsn) == groups;
  }

  /**
   * True when {@code channel}, the version stamped {@code stamp}, only appended to the version this
   * index describes (the test {@link #index} extends an index by), so that the index still tells
   * where the lines it holds are.
   */
  boolean prefixOf(FileStamp stamp, FileChannel channel) throws IOException {
    return stamp.size() >= end && windowsMatch(channel);
  }

  /**
   * The {@code __$start_lsn} of the first non-blank line of a version, read from its first bytes
   * only; null when that line is not one the index would take (the caller then indexes the file).
   */
  static Lsn firstStartLsn(FileChannel channel, long size) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(1 << 16, Math.max(1, size)));
    byte[] line = new byte[0];
    long position = 0;
    while (position < size && line.length <= BUFFER * 16) {
      buffer.clear();
      int n = channel.read(buffer, position);
      if (n <= 0) {
        return null;
      }
      byte[] bytes = buffer.array();
      int from = 0;
      for (int i = 0; i < n; i++) {
        if (bytes[i] == '\r') {
          return null;
        }
        if (bytes[i] == '\n') {
          byte[] text = Arrays.copyOf(line, line.length + i - from);
          System.arraycopy(bytes, from, text, line.length, i - from);
          if (!Builder.blank(text, 0, text.length)) {
            return startLsn(text);
          }
          line = new byte[0];
          from = i + 1;
        }
      }
      byte[] grown = Arrays.copyOf(line, line.length + n - from);
      System.arraycopy(bytes, from, grown, line.length, n - from);
      line = grown;
      position += n;
    }
    return null;
  }

  private static Lsn startLsn(byte[] text) {
    try {
      ObjectNode n = Builder.metadataFields(text, 0, text.length);
      return n == null ? null : FakeFormat.lsn(n, FakeFormat.START_LSN, "");
    } catch (IOException | CdcException e) {
      return null;
    }
  }

  private boolean windowsMatch(FileChannel channel) throws IOException {
    return Arrays.equals(head, read(channel, 0, head.length))
        && Arrays.equals(tail, read(channel, end - tail.length, tail.length));
  }

  private static byte[] read(FileChannel channel, long position, int length) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length);
    while (buffer.hasRemaining()) {
      int n = channel.read(buffer, position + buffer.position());
      if (n < 0) {
        break;
      }
    }
    return buffer.position() == length ? buffer.array() : Arrays.copyOf(buffer.array(), 0);
  }

  /** The growing arrays of an index being built. */
  private static final class Builder {
    int groups;
    Lsn[] lsns;
    int[] firstLines;
    long[] lastOffsets;
    int[] lastLines;
    long[] rowsBefore;
    long rows;
    long end;
    int lines;
    boolean stopped;
    OrderKey lastKey;

    Builder() {
      lsns = new Lsn[16];
      firstLines = new int[16];
      lastOffsets = new long[16];
      lastLines = new int[16];
      rowsBefore = new long[17];
    }

    Builder(ChangeTableIndex from) {
      int capacity = Math.max(16, from.groups * 2);
      groups = from.groups;
      lsns = Arrays.copyOf(from.lsns, capacity);
      firstLines = Arrays.copyOf(from.firstLines, capacity);
      lastOffsets = Arrays.copyOf(from.lastOffsets, capacity);
      lastLines = Arrays.copyOf(from.lastLines, capacity);
      rowsBefore = Arrays.copyOf(from.rowsBefore, capacity + 1);
      rows = from.rowsBefore[from.groups];
      end = from.end;
      lines = from.linesBeforeEnd;
      stopped = from.stopped;
      lastKey = from.lastKey;
    }

    /**
     * Reads the lines from {@link #end} up to {@code size} that end with {@code \n}. A {@code \r}
     * (which the writer never writes, and which {@link java.io.BufferedReader#readLine()} also
     * takes as a line end) stops the index before its line, so that readers read such a file with
     * the full reader from there.
     */
    void scan(Path file, FileChannel channel, long size) throws IOException {
      ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(BUFFER, Math.max(1, size - end)));
      byte[] line = new byte[256];
      int lineLength = 0;
      long position = end;
      while (position < size && !stopped) {
        buffer.clear();
        buffer.limit((int) Math.min(buffer.capacity(), size - position));
        int n = channel.read(buffer, position);
        if (n <= 0) {
          break;
        }
        byte[] bytes = buffer.array();
        int from = 0;
        for (int i = 0; i < n; i++) {
          byte c = bytes[i];
          if (c == '\r') {
            stopped = true;
            break;
          }
          if (c == '\n') {
            if (lineLength > 0) {
              line = append(line, lineLength, bytes, from, i - from);
              take(file, line, 0, lineLength + i - from);
              lineLength = 0;
            } else {
              take(file, bytes, from, i - from);
            }
            if (stopped) {
              break;
            }
            lines++;
            from = i + 1;
            end = position + from;
          }
        }
        if (!stopped && from < n) {
          line = append(line, lineLength, bytes, from, n - from);
          lineLength += n - from;
        }
        position += n;
      }
    }

    private static byte[] append(byte[] line, int length, byte[] bytes, int from, int count) {
      if (length + count > line.length) {
        line = Arrays.copyOf(line, Math.max(line.length * 2, length + count));
      }
      System.arraycopy(bytes, from, line, length, count);
      return line;
    }

    /** Indexes one complete line, or stops before it. */
    private void take(Path file, byte[] text, int offset, int length) {
      long lineStart = end;
      int lineNumber = lines + 1;
      if (blank(text, offset, length)) {
        return;
      }
      OrderKey key;
      try {
        ObjectNode n = metadataFields(text, offset, length);
        if (n == null) {
          stopped = true;
          return;
        }
        String where = file.getFileName() + ":" + lineNumber;
        Lsn start = FakeFormat.lsn(n, FakeFormat.START_LSN, where);
        Lsn seqval = FakeFormat.lsn(n, FakeFormat.SEQVAL, where);
        int operation = FakeFormat.integer(n, FakeFormat.OPERATION, where);
        Integer commandId = FakeFormat.optionalInt(n, FakeFormat.COMMAND_ID);
        key = new OrderKey(start, commandId, seqval, operation);
      } catch (IOException | CdcException e) {
        stopped = true;
        return;
      }
      if (lastKey != null && key.compareTo(lastKey) < 0) {
        stopped = true;
        return;
      }
      lastKey = key;
      if (groups > 0 && lsns[groups - 1].equals(key.start())) {
        lastOffsets[groups - 1] = lineStart;
        lastLines[groups - 1] = lineNumber;
        rows++;
        return;
      }
      if (groups == lsns.length) {
        int capacity = groups * 2;
        lsns = Arrays.copyOf(lsns, capacity);
        firstLines = Arrays.copyOf(firstLines, capacity);
        lastOffsets = Arrays.copyOf(lastOffsets, capacity);
        lastLines = Arrays.copyOf(lastLines, capacity);
        rowsBefore = Arrays.copyOf(rowsBefore, capacity + 1);
      }
      lsns[groups] = key.start();
      firstLines[groups] = lineNumber;
      lastOffsets[groups] = lineStart;
      lastLines[groups] = lineNumber;
      rowsBefore[groups] = rows;
      groups++;
      rows++;
    }

    /**
     * The line's four metadata fields ({@code __$start_lsn}, {@code __$seqval}, {@code
     * __$operation}, {@code __$command_id}, those present) as an object, parsing the whole line (so
     * a line that is not one JSON object stops the index as before) but building nodes only for
     * these fields, not for the captured values; null when the line is not a JSON object.
     */
    private static ObjectNode metadataFields(byte[] text, int offset, int length)
        throws IOException {
      try (JsonParser p = FakeFormat.MAPPER.getFactory().createParser(text, offset, length)) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          return null;
        }
        ObjectNode n = FakeFormat.MAPPER.createObjectNode();
        String field;
        while ((field = p.nextFieldName()) != null) {
          JsonToken value = p.nextToken();
          if (METADATA_FIELDS.contains(field)) {
            n.set(field, p.readValueAsTree());
          } else if (value.isStructStart()) {
            p.skipChildren();
          }
        }
        if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
          return null;
        }
        return n;
      }
    }

    private static boolean blank(byte[] text, int offset, int length) {
      for (int i = offset; i < offset + length; i++) {
        int c = text[i] & 0xff;
        if (c >= 0x80 || !Character.isWhitespace(c)) {
          return false;
        }
      }
      return true;
    }
  }
}
