package org.lakecdc.io.mssqlcdc.fake;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The lines of a change table version read as UTF-8 bytes, never decoded to text: each line is a
 * slice of one buffer ({@link #bytes()}, {@link #offset()}, {@link #length()}), valid until the
 * next call of {@link #next()}, so a streaming JSON parse can read it in place. Lines end as {@link
 * java.io.BufferedReader#readLine()} ends them ({@code \n}, {@code \r} or {@code \r\n}; a last line
 * without an end counts), so line numbers match those of {@link FakeFormat.JsonLines}.
 */
final class ChangeLines implements Closeable {
  private static final int BUFFER = 1 << 16;

  private final Path file;
  private final FileChannel channel;
  private long position;
  private byte[] buffer = new byte[BUFFER];
  private int start;
  private int limit;
  private boolean eof;
  private boolean skipLineFeed;
  private int lineOffset;
  private int lineLength;
  private boolean lineAscii;
  private int lineNumber;

  /**
   * Reads a version of a file already open, from a byte offset that starts a line.
   *
   * @param file the file's path, for messages
   * @param channel the open version; closed with this reader; null reads as an absent file
   * @param offset where to start, in bytes
   * @param linesBefore the number of lines before {@code offset}, so that messages name the lines
   *     as a read from the start does
   */
  ChangeLines(Path file, FileChannel channel, long offset, int linesBefore) {
    this.file = file;
    this.channel = channel;
    this.position = offset;
    this.lineNumber = linesBefore;
    this.eof = channel == null;
  }

  /**
   * Moves to the next line (blank lines included).
   *
   * @return false at the end of the file
   * @throws UncheckedIOException when the file cannot be read
   */
  boolean next() {
    int scanned = start;
    // The bytes of the line so far, or-ed: negative once one of them is not ASCII.
    int bits = 0;
    while (true) {
      if (skipLineFeed && scanned < limit) {
        skipLineFeed = false;
        if (buffer[scanned] == '\n') {
          start = ++scanned;
        }
      }
      for (int i = scanned; i < limit; i++) {
        byte c = buffer[i];
        bits |= c;
        // One test per byte: only a byte at or below '\r' (a control or a non-ASCII byte) can end
        // the line.
        if (c <= '\r' && (c == '\n' || c == '\r')) {
          lineOffset = start;
          lineLength = i - start;
          lineAscii = bits >= 0;
          start = i + 1;
          skipLineFeed = c == '\r';
          lineNumber++;
          return true;
        }
      }
      scanned = limit;
      if (eof) {
        if (start < limit) {
          lineOffset = start;
          lineLength = limit - start;
          lineAscii = bits >= 0;
          start = limit;
          lineNumber++;
          return true;
        }
        return false;
      }
      int kept = limit - start;
      if (start > 0) {
        System.arraycopy(buffer, start, buffer, 0, kept);
      } else if (kept == buffer.length) {
        buffer = Arrays.copyOf(buffer, buffer.length * 2);
      }
      scanned -= start;
      start = 0;
      limit = kept;
      fill();
    }
  }

  private void fill() {
    try {
      int n = channel.read(ByteBuffer.wrap(buffer, limit, buffer.length - limit), position);
      if (n < 0) {
        eof = true;
      } else {
        position += n;
        limit += n;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + where() + ": " + e.getMessage(), e);
    }
  }

  /** The buffer holding the current line. */
  byte[] bytes() {
    return buffer;
  }

  /** Where the current line starts in {@link #bytes()}. */
  int offset() {
    return lineOffset;
  }

  /** The current line's length in bytes, its end not included. */
  int length() {
    return lineLength;
  }

  /**
   * True when every byte of the current line is ASCII (below 0x80), found while looking for its
   * end: such a line is valid UTF-8 without decoding it.
   */
  boolean ascii() {
    return lineAscii;
  }

  /** {@code <file>:<line>} of the current line, for messages. */
  String where() {
    return file.getFileName() + ":" + lineNumber;
  }

  @Override
  public void close() {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot close " + file, e);
      }
    }
  }
}
