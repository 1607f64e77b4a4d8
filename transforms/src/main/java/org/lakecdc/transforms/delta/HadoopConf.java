package org.lakecdc.transforms.delta;

import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import org.apache.hadoop.conf.Configuration;

/**
 * The Hadoop configuration a job gives every {@link DeltaTables} it opens, on the launcher and on
 * each worker: keys and values set over Hadoop's defaults (and whatever {@code core-site.xml} the
 * class path holds), e.g. {@code fs.s3a.endpoint} or {@code fs.azure.account.key.<account>...}.
 * Serializable, so a transform carries it to its workers, where {@link #tables()} opens the tables
 * with it; its entries never leave the process in text: {@link #toString()} and {@link #describe()}
 * name the keys and hide the value of every {@link #isSecret secret} key.
 *
 * <p>Immutable; equal when the entries are equal.
 */
public final class HadoopConf implements Serializable {
  private static final long serialVersionUID = 1L;

  private static final HadoopConf EMPTY = new HadoopConf(Map.of());

  /** The JVM's Delta tables per set of entries ({@link #tables()}). */
  private static final Map<Map<String, String>, DeltaTables> SHARED = new ConcurrentHashMap<>();

  /** Words that make a key secret (its value is never shown), matched ignoring case. */
  private static final List<String> SECRET_WORDS =
      List.of("secret", "password", "key", "token", "credential");

  // A TreeMap: a stable order in messages and one serialized form per content.
  private final TreeMap<String, String> entries;

  private HadoopConf(Map<String, String> entries) {
    this.entries = new TreeMap<>(entries);
  }

  /** No entry: Hadoop's defaults and the class path's {@code core-site.xml} only. */
  public static HadoopConf empty() {
    return EMPTY;
  }

  /**
   * These entries.
   *
   * @param entries Hadoop keys to values, neither null nor blank keys
   * @return the configuration
   * @throws IllegalArgumentException when a key is blank or a value is null
   */
  public static HadoopConf of(Map<String, String> entries) {
    for (Map.Entry<String, String> e : entries.entrySet()) {
      if (e.getKey() == null || e.getKey().isBlank()) {
        throw new IllegalArgumentException("A Hadoop configuration key must not be empty");
      }
      if (e.getValue() == null) {
        throw new IllegalArgumentException(
            "The Hadoop configuration key " + e.getKey() + " has no value");
      }
    }
    return entries.isEmpty() ? EMPTY : new HadoopConf(entries);
  }

  /**
   * Parses {@code key=value} entries: the first {@code =} ends the key (a value may hold more
   * {@code =}); key and value are stripped of surrounding white space; a later entry of the same
   * key wins. Beam splits a list option's value at commas ({@code --hadoopConf=a=1,b=2} arrives as
   * {@code [a=1, b=2]}), so a piece without {@code =} after an entry is the rest of that entry's
   * value, split off at a comma: {@code fs.s3a.aws.credentials.provider=A,B} arrives as {@code
   * [fs.s3a.aws.credentials.provider=A, B]} and is put back together as {@code A,B}.
   *
   * @param option the option's name for messages, e.g. {@code hadoopConf}
   * @param items the entries
   * @return the configuration
   * @throws IllegalArgumentException {@code --<option> must be key=value entries such as
   *     fs.s3a.endpoint=http://minio:9000, not '<entry>'}, naming the entry (its value hidden when
   *     the key is secret)
   */
  public static HadoopConf parseEntries(String option, List<String> items) {
    Map<String, String> map = new LinkedHashMap<>();
    String last = null;
    for (String item : items) {
      int eq = item == null ? -1 : item.indexOf('=');
      if (eq < 0 && item != null && last != null) {
        map.put(last, map.get(last) + "," + item.strip());
        continue;
      }
      if (!isEntry(item)) {
        throw notAnEntry(option, item);
      }
      last = item.substring(0, eq).strip();
      map.put(last, item.substring(eq + 1).strip());
    }
    return of(map);
  }

  /**
   * Checks the values of a list option as they stand on the command line, one per occurrence
   * ({@code --hadoopConf=a=1 --hadoopConf=b} is {@code [a=1, b]}), before Beam splits them at
   * commas and joins the occurrences into one list, where {@link #parseEntries} could no longer
   * tell an occurrence's comma-continued value ({@code --hadoopConf=k=A,B}) from a new occurrence
   * without {@code =}: each occurrence, up to its first comma, must be a {@code key=value} entry
   * with a non-blank key. Continuation pieces after a comma stay allowed within an occurrence.
   *
   * @param option the option's name for messages, e.g. {@code hadoopConf}
   * @param occurrences the option's values, one per occurrence on the command line, in order
   * @throws IllegalArgumentException as {@link #parseEntries} does, naming the first occurrence
   *     that does not start with an entry (up to its first comma; its value hidden when secret)
   */
  public static void checkOccurrences(String option, List<String> occurrences) {
    for (String occurrence : occurrences) {
      String first =
          occurrence == null || occurrence.indexOf(',') < 0
              ? occurrence
              : occurrence.substring(0, occurrence.indexOf(','));
      if (!isEntry(first)) {
        throw notAnEntry(option, first);
      }
    }
  }

  /** Whether {@code item} is {@code key=value} with a non-blank key. */
  private static boolean isEntry(String item) {
    int eq = item == null ? -1 : item.indexOf('=');
    return eq > 0 && !item.substring(0, eq).isBlank();
  }

  private static IllegalArgumentException notAnEntry(String option, String item) {
    return new IllegalArgumentException(
        "--"
            + option
            + " must be key=value entries such as fs.s3a.endpoint=http://minio:9000, not '"
            + shownEntry(item)
            + "'");
  }

  /**
   * Reads a Hadoop configuration file ({@code core-site.xml} form: {@code
   * <configuration><property><name>...</name><value>...</value></property>...}) with Hadoop's own
   * parser, on the calling machine: its properties become entries (variables such as {@code
   * ${user.name}} expanded as Hadoop expands them).
   *
   * @param option the option's name for messages, e.g. {@code hadoopConfFile}
   * @param file the file's path
   * @return the configuration
   * @throws IllegalArgumentException {@code --<option> <file> ...: <why>} when the file is missing,
   *     unreadable or not such a configuration; {@code --<option> <file>: property <n> (line <l>)
   *     has no name: ...} for a {@code <property>} without a {@code <name>} (or a {@code name}
   *     attribute) or with a blank one, which Hadoop would skip without a word (n counts the file's
   *     {@code <property>} elements from 1)
   */
  public static HadoopConf readFile(String option, String file) {
    Path path = Path.of(file);
    if (!Files.isRegularFile(path)) {
      throw new IllegalArgumentException(
          "--"
              + option
              + " "
              + file
              + " is not a file: pass the path of a Hadoop configuration file (core-site.xml"
              + " form)");
    }
    if (!Files.isReadable(path)) {
      throw new IllegalArgumentException("--" + option + " " + file + " cannot be read");
    }
    Configuration conf = new Configuration(false);
    conf.setQuietMode(true);
    conf.addResource(new org.apache.hadoop.fs.Path(path.toAbsolutePath().toUri()));
    Map<String, String> map = new LinkedHashMap<>();
    try {
      // Iterating loads the resource: a malformed file fails here, not on a worker.
      for (Map.Entry<String, String> e : conf) {
        map.put(e.getKey(), conf.get(e.getKey()));
      }
    } catch (RuntimeException e) {
      throw notAConfigurationFile(option, file, deepest(e), e);
    }
    requireNamedProperties(option, file, path);
    return of(map);
  }

  /** {@code --<option> <file> is not a Hadoop configuration file (...): <why's first line>}. */
  private static IllegalArgumentException notAConfigurationFile(
      String option, String file, Throwable why, Exception cause) {
    return new IllegalArgumentException(
        "--"
            + option
            + " "
            + file
            + " is not a Hadoop configuration file (core-site.xml form): "
            + firstLine(why),
        cause);
  }

  /**
   * Refuses a {@code <property>} of the file that has no name (neither a non-blank {@code <name>}
   * element nor a {@code name} attribute, the two forms Hadoop's parser reads). Read with the JDK's
   * StAX parser, DTDs and external entities off; the file has already been parsed by Hadoop.
   */
  private static void requireNamedProperties(String option, String file, Path path) {
    XMLInputFactory factory = XMLInputFactory.newFactory();
    factory.setProperty(XMLInputFactory.SUPPORT_DTD, false);
    factory.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
    int properties = 0;
    try (InputStream in = Files.newInputStream(path)) {
      XMLStreamReader xml = factory.createXMLStreamReader(in);
      try {
        int depth = 0;
        int propertyDepth = -1;
        int propertyLine = -1;
        boolean named = false;
        StringBuilder name = null;
        while (xml.hasNext()) {
          int event = xml.next();
          if (event == XMLStreamConstants.START_ELEMENT) {
            depth++;
            String element = xml.getLocalName();
            if (element.equals("property") && propertyDepth < 0) {
              properties++;
              propertyDepth = depth;
              propertyLine = xml.getLocation().getLineNumber();
              String attribute = xml.getAttributeValue(null, "name");
              named = attribute != null && !attribute.isBlank();
            } else if (element.equals("name") && depth == propertyDepth + 1) {
              name = new StringBuilder();
            }
          } else if ((event == XMLStreamConstants.CHARACTERS || event == XMLStreamConstants.CDATA)
              && name != null) {
            name.append(xml.getText());
          } else if (event == XMLStreamConstants.END_ELEMENT) {
            if (name != null && depth == propertyDepth + 1) {
              named |= !name.toString().isBlank();
              name = null;
            } else if (depth == propertyDepth) {
              if (!named) {
                throw new IllegalArgumentException(
                    "--"
                        + option
                        + " "
                        + file
                        + ": property "
                        + properties
                        + " (line "
                        + propertyLine
                        + ") has no name: give each <property> a non-empty <name> and its"
                        + " <value>");
              }
              propertyDepth = -1;
            }
            depth--;
          }
        }
      } finally {
        xml.close();
      }
    } catch (IOException | XMLStreamException e) {
      throw notAConfigurationFile(option, file, e, e);
    }
  }

  /** This configuration with {@code later}'s entries set over it (a key of both takes later's). */
  public HadoopConf overriddenBy(HadoopConf later) {
    if (later.entries.isEmpty()) {
      return this;
    }
    Map<String, String> merged = new TreeMap<>(entries);
    merged.putAll(later.entries);
    return new HadoopConf(merged);
  }

  /** The entries, sorted by key (unmodifiable). */
  public Map<String, String> entries() {
    return Collections.unmodifiableMap(entries);
  }

  /** Whether there is no entry. */
  public boolean isEmpty() {
    return entries.isEmpty();
  }

  /**
   * The Delta tables of this configuration in this JVM ({@link DeltaTables#create(Map)}, made once
   * per distinct set of entries and shared): what every launcher step and every {@code DoFn} that
   * opens a table calls. Sharing is what keeps commits of many tables cheap: one Hadoop
   * configuration parsed once, one Kernel engine, and one snapshot cache per table path, so a
   * committer's commit to the shared facts or control table leaves the snapshot warm for the next
   * committer instead of each committer reading that table's log again. {@link DeltaTables} is
   * thread-safe.
   *
   * @return the JVM's instance for these entries
   */
  public DeltaTables tables() {
    return SHARED.computeIfAbsent(entries, e -> DeltaTables.create(e));
  }

  /**
   * Waits until no background compaction and no background checkpoint of any of this JVM's shared
   * {@link DeltaTables} ({@link #tables()}) is queued or running ({@link
   * DeltaTables#awaitCompactions}, {@link DeltaTables#awaitCheckpoints}): the end of a run.
   *
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public static void awaitSharedCompactions() throws InterruptedException {
    for (DeltaTables shared : List.copyOf(SHARED.values())) {
      shared.awaitCompactions();
      shared.awaitCheckpoints();
    }
  }

  /**
   * Whether a key's value is a secret: the key holds {@code secret}, {@code password}, {@code key},
   * {@code token} or {@code credential}, ignoring case ({@code fs.s3a.secret.key}, {@code
   * fs.azure.account.key.<account>.dfs.core.windows.net}, {@code fs.gs.auth...credential...}).
   */
  public static boolean isSecret(String key) {
    String lower = key.toLowerCase(Locale.ROOT);
    for (String word : SECRET_WORDS) {
      if (lower.contains(word)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The entries for people: {@code key=value, ...} sorted by key, the value of a secret key shown
   * as {@code ****}; {@code (none)} when empty.
   */
  public String describe() {
    if (entries.isEmpty()) {
      return "(none)";
    }
    List<String> shown = new ArrayList<>();
    entries.forEach((k, v) -> shown.add(k + "=" + (isSecret(k) ? "****" : v)));
    return String.join(", ", shown);
  }

  /** {@code HadoopConf[...]} with {@link #describe()}: secret values hidden. */
  @Override
  public String toString() {
    return "HadoopConf[" + describe() + "]";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof HadoopConf other && entries.equals(other.entries);
  }

  @Override
  public int hashCode() {
    return Objects.hash(entries);
  }

  private static String shownEntry(String item) {
    if (item == null) {
      return "null";
    }
    int eq = item.indexOf('=');
    String clean = item.replaceAll("\\p{Cntrl}", "?");
    if (eq > 0 && isSecret(item.substring(0, eq))) {
      return clean.substring(0, eq) + "=****";
    }
    // Without '=' the whole entry may be a secret pasted alone: shown only when no secret word.
    return eq <= 0 && isSecret(item) ? "****" : clean;
  }

  private static Throwable deepest(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  private static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }
}
