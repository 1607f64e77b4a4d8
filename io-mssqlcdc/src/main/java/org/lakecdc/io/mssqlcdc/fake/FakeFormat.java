package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The names and encodings of the fake's directory format (docs/fake-format.md, format version
 * {@value #FORMAT_VERSION}): file names, SQL Server column names, the JSON mapper, and a streaming
 * JSON Lines reader. The one place that knows how a file is spelled.
 */
final class FakeFormat {
  /** The format version this code writes and reads ({@code server.json: format_version}). */
  static final int FORMAT_VERSION = 1;

  static final String SERVER = "server.json";
  static final String LSN_TIME_MAPPING = "cdc.lsn_time_mapping.jsonl";
  static final String CHANGE_TABLES = "cdc.change_tables.jsonl";
  static final String CAPTURED_COLUMNS = "cdc.captured_columns.jsonl";
  static final String INDEX_COLUMNS = "cdc.index_columns.jsonl";
  static final String DDL_HISTORY = "cdc.ddl_history.jsonl";
  static final String SYS_TABLES = "sys.tables.jsonl";
  static final String SYS_COLUMNS = "sys.columns.jsonl";

  // Change table metadata columns, as SQL Server names them.
  static final String START_LSN = "__$start_lsn";
  static final String SEQVAL = "__$seqval";
  static final String OPERATION = "__$operation";
  static final String COMMAND_ID = "__$command_id";

  /**
   * Server-local times in the CDC tables ({@code tran_end_time}, {@code create_date}, {@code
   * ddl_time}): ISO, always with milliseconds.
   */
  static final DateTimeFormatter LOCAL_MILLIS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS", Locale.ROOT);

  /** The transaction id of an idle ("dummy") mapping entry, as SQL Server writes it. */
  static final String ZERO_TRAN_ID = Lsn.ZERO.toString();

  static final ObjectMapper MAPPER =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  /**
   * {@link #MAPPER}'s reader of JSON trees, made once: {@code ObjectMapper.readTree(String)}
   * resolves the tree's type again at every line (a sixth of a whole snapshot's parsing).
   */
  private static final ObjectReader TREES = MAPPER.readerFor(JsonNode.class);

  private FakeFormat() {}

  /** {@code cdc.<ci>_CT.jsonl}. */
  static String changeTableFile(String captureInstance) {
    return "cdc." + captureInstance + "_CT.jsonl";
  }

  /** {@code <schema>.<table>.jsonl}: the source table's current rows. */
  static String sourceTableFile(String schema, String table) {
    return schema + "." + table + ".jsonl";
  }

  static String line(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot serialize " + node, e);
    }
  }

  static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  static String formatLocal(LocalDateTime t) {
    return LOCAL_MILLIS.format(t);
  }

  /** Reads a server-local time leniently: ISO, with {@code T} or a space, any fraction. */
  static LocalDateTime parseLocal(String text) {
    return LocalDateTime.parse(text.strip().replace(' ', 'T'));
  }

  // Type columns of cdc.captured_columns and sys.columns, named like
  // sys.sp_cdc_get_captured_columns names them.
  static final String COLUMN_TYPE = "column_type";
  static final String CHARACTER_MAXIMUM_LENGTH = "character_maximum_length";
  static final String NUMERIC_PRECISION = "numeric_precision";
  static final String NUMERIC_SCALE = "numeric_scale";
  static final String DATETIME_PRECISION = "datetime_precision";

  /**
   * The collation of a character column in {@code sys.columns}, named as there; absent means {@link
   * Collation#DEFAULT_NAME}.
   */
  static final String COLLATION_NAME = "collation_name";

  private static boolean hasLength(String name) {
    switch (name) {
      case "char":
      case "varchar":
      case "nchar":
      case "nvarchar":
      case "binary":
      case "varbinary":
        return true;
      default:
        return false;
    }
  }

  private static boolean hasFractionalSeconds(String name) {
    return name.equals("datetime2") || name.equals("datetimeoffset") || name.equals("time");
  }

  /** Writes a type as {@code column_type} plus its length, precision and scale columns. */
  static void putType(ObjectNode node, SqlServerType type) {
    node.put(COLUMN_TYPE, type.name());
    if (hasLength(type.name())) {
      node.put(CHARACTER_MAXIMUM_LENGTH, type.precision());
    } else if (hasFractionalSeconds(type.name())) {
      node.put(DATETIME_PRECISION, type.scale() != null ? type.scale() : type.precision());
    } else if (type.precision() != null) {
      node.put(NUMERIC_PRECISION, type.precision());
      node.put(NUMERIC_SCALE, type.scale());
    }
  }

  /** Reads a type written by {@link #putType}. */
  static SqlServerType type(JsonNode node, String where) {
    String name = text(node, COLUMN_TYPE, where);
    Integer length = optionalInt(node, CHARACTER_MAXIMUM_LENGTH);
    Integer precision = optionalInt(node, NUMERIC_PRECISION);
    Integer scale = optionalInt(node, NUMERIC_SCALE);
    Integer fraction = optionalInt(node, DATETIME_PRECISION);
    String lower = name.toLowerCase(Locale.ROOT);
    if (hasLength(lower) && length != null) {
      return new SqlServerType(lower, length, null);
    }
    if (hasFractionalSeconds(lower) && fraction != null) {
      return new SqlServerType(lower, fraction, null);
    }
    if (precision != null) {
      return new SqlServerType(lower, precision, scale);
    }
    return SqlServerType.of(lower);
  }

  static String text(JsonNode node, String field, String where) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      throw new CdcException(where + ": field '" + field + "' is missing");
    }
    return v.asText();
  }

  static String optionalText(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  static Integer optionalInt(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asInt();
  }

  static int integer(JsonNode node, String field, String where) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull() || !v.canConvertToInt()) {
      throw new CdcException(where + ": field '" + field + "' must be an integer");
    }
    return v.asInt();
  }

  static boolean bool(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v != null && (v.asBoolean() || v.asInt() == 1);
  }

  static Lsn lsn(JsonNode node, String field, String where) {
    String text = text(node, field, where);
    Lsn fast = canonicalLsn(text);
    if (fast != null) {
      return fast;
    }
    try {
      return Lsn.parseCanonical(text);
    } catch (IllegalArgumentException e) {
      throw new CdcException(where + ": field '" + field + "': " + e.getMessage(), e);
    }
  }

  /**
   * {@link Lsn#parseCanonical} without its regular expression, for the millions of LSNs a change
   * table holds: {@code 0x} or {@code 0X} and exactly 20 hexadecimal digits; null for any other
   * text (which {@link Lsn#parseCanonical} then refuses with its message).
   */
  static Lsn canonicalLsn(String text) {
    return canonicalLsn(text.toCharArray(), 0, text.length());
  }

  /**
   * {@link #canonicalLsn(String)} of {@code length} characters of {@code text} from {@code offset}
   * (a streaming parser's buffer), without making a string.
   */
  static Lsn canonicalLsn(char[] text, int offset, int length) {
    if (length != 2 + 2 * Lsn.BYTES
        || text[offset] != '0'
        || (text[offset + 1] != 'x' && text[offset + 1] != 'X')) {
      return null;
    }
    byte[] bytes = new byte[Lsn.BYTES];
    for (int i = 0; i < Lsn.BYTES; i++) {
      int hi = hexDigit(text[offset + 2 + 2 * i]);
      int lo = hexDigit(text[offset + 3 + 2 * i]);
      if (hi < 0 || lo < 0) {
        return null;
      }
      bytes[i] = (byte) (hi << 4 | lo);
    }
    return Lsn.ofBytes(bytes);
  }

  /** An ASCII hexadecimal digit's value, either case; -1 for any other character. */
  private static int hexDigit(char c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  static LocalDateTime local(JsonNode node, String field, String where) {
    String text = text(node, field, where);
    try {
      return parseLocal(text);
    } catch (DateTimeParseException e) {
      throw new CdcException(where + ": field '" + field + "' is not an ISO time: " + text, e);
    }
  }

  static LocalDateTime optionalLocal(JsonNode node, String field, String where) {
    return optionalText(node, field) == null ? null : local(node, field, where);
  }

  /** Every object of a JSON Lines file; an absent file has none. */
  static List<JsonNode> readAll(Path file) {
    List<JsonNode> rows = new ArrayList<>();
    try (JsonLines lines = JsonLines.open(file)) {
      for (JsonNode row = lines.next(); row != null; row = lines.next()) {
        rows.add(row);
      }
    }
    return rows;
  }

  /** Reads one JSON document (server.json). */
  static JsonNode readJson(Path file) {
    try {
      return MAPPER.readTree(file.toFile());
    } catch (IOException e) {
      throw new CdcException("Cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * A JSON Lines file read one line at a time, never whole: one JSON object per non-blank line. An
   * absent file reads as empty. Errors name the file and line.
   */
  static final class JsonLines implements Closeable {
    private final Path file;
    private final BufferedReader reader;
    private int lineNumber;
    private String lastLine;
    private boolean countBytes;
    private long bytes;
    private long lineStart;

    private JsonLines(Path file, BufferedReader reader) {
      this.file = file;
      this.reader = reader;
    }

    static JsonLines open(Path file) {
      try {
        return new JsonLines(file, Files.newBufferedReader(file, StandardCharsets.UTF_8));
      } catch (NoSuchFileException e) {
        return new JsonLines(file, null);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot open " + file + ": " + e.getMessage(), e);
      }
    }

    /**
     * Reads a version of a file already open, from a byte offset that starts a line.
     *
     * @param file the file's path, for messages
     * @param channel the open version; closed with this reader; null reads as an absent file
     * @param offset where to start, in bytes
     * @param linesBefore the number of lines before {@code offset}, so that messages name the lines
     *     as a read from the start does
     */
    static JsonLines open(Path file, FileChannel channel, long offset, int linesBefore) {
      if (channel == null) {
        return new JsonLines(file, null);
      }
      try {
        channel.position(offset);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read " + file + ": " + e.getMessage(), e);
      }
      JsonLines lines =
          new JsonLines(
              file,
              new BufferedReader(
                  Channels.newReader(channel, StandardCharsets.UTF_8.newDecoder(), -1), 1 << 16));
      lines.lineNumber = linesBefore;
      return lines;
    }

    /** The next object, or null at the end. */
    JsonNode next() {
      if (reader == null) {
        return null;
      }
      try {
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
          lineNumber++;
          if (countBytes) {
            lineStart = bytes;
            bytes += utf8Length(line) + 1;
          }
          if (line.isBlank()) {
            continue;
          }
          JsonNode node = TREES.readTree(line);
          if (!node.isObject()) {
            throw new CdcException(where() + ": expected a JSON object");
          }
          lastLine = line;
          return node;
        }
        return null;
      } catch (JsonProcessingException e) {
        throw new CdcException(where() + ": invalid JSON: " + e.getOriginalMessage(), e);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read " + where() + ": " + e.getMessage(), e);
      }
    }

    /**
     * Counts the bytes of the lines read from here on ({@link #lineStart()}, {@link #bytes()}),
     * each line taken as its UTF-8 bytes and one byte for its end (true of {@code \n} and of a lone
     * {@code \r}; a {@code \r\n} or an unended last line makes {@link #bytes()} differ from the
     * file's size, which tells a caller that the offsets are not the file's).
     *
     * @return this reader
     */
    JsonLines countingBytes() {
      countBytes = true;
      return this;
    }

    /** The byte offset of the line {@link #next()} returned last (with {@link #countingBytes}). */
    long lineStart() {
      return lineStart;
    }

    /** The bytes of the lines read so far (with {@link #countingBytes}). */
    long bytes() {
      return bytes;
    }

    /** The 1-based number of the line {@link #next()} returned last. */
    int lineNumber() {
      return lineNumber;
    }

    /** The UTF-8 bytes of {@code line}. */
    static long utf8Length(String line) {
      long n = 0;
      for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i);
        if (c < 0x80) {
          n++;
        } else if (c < 0x800) {
          n += 2;
        } else if (Character.isSurrogate(c)) {
          // A pair is 4 bytes: 2 for each half.
          n += 2;
        } else {
          n += 3;
        }
      }
      return n;
    }

    /** The text of the line {@link #next()} returned last. */
    String lastLine() {
      return lastLine;
    }

    /** {@code <file>:<line>}, for messages. */
    String where() {
      return file.getFileName() + ":" + lineNumber;
    }

    @Override
    public void close() {
      if (reader != null) {
        try {
          reader.close();
        } catch (IOException e) {
          throw new UncheckedIOException("Cannot close " + file, e);
        }
      }
    }
  }

  /** Serializes rows to lines lazily (for whole-file writes). */
  static Iterable<String> lines(Iterable<? extends JsonNode> rows) {
    return () -> {
      Iterator<? extends JsonNode> it = rows.iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public String next() {
          return line(it.next());
        }
      };
    };
  }
}
