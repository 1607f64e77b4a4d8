package org.lakecdc.pipelines.cdc;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.MembershipFacts;
import org.lakecdc.pipelines.targets.Target;

/**
 * Follows a running run's {@link TableListing}: each {@link #poll} reads it again and says which
 * tables joined (a new line that passes every check of a table of many, against the source and
 * against the running tables' targets) and which left (a line removed), writing their {@code
 * joined} and {@code left} facts rows ({@link MembershipFacts}) and printing one line for each. A
 * refused line is printed once (its origin and what is wrong) and ignored; a running table whose
 * options changed keeps the options it started with (printed once); a listing that cannot be read
 * or lists no table changes nothing. Thread-safe.
 */
final class ListingWatch {
  /** The suffix of a refused line's message. */
  static final String IGNORED = "; ignored, the running tables go on";

  /** The tables' stop flags of every run in this JVM, by {@link TableStop#key}. */
  private static final Set<String> STOPPED = ConcurrentHashMap.newKeySet();

  /** The watch of each listing followed in this JVM, by the listing's identity, until forgotten. */
  private static final Map<TableListing, ListingWatch> WATCHES =
      java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());

  /**
   * A table joining the run.
   *
   * @param config its configuration
   * @param origin where it is listed
   */
  record Joining(JobConfig config, String origin) {}

  /**
   * What one poll found.
   *
   * @param joined the tables added, in the listing's order
   * @param left the capture instances removed, as they were listed
   */
  record Changes(List<Joining> joined, List<String> left) {}

  /**
   * The stop of one table's read in one run: set when its line is removed. Serializable and shipped
   * with the read; in another JVM (a cluster's worker) it never asks to stop.
   *
   * @param key the run's identity and the table's capture instance in lower case
   */
  record TableStop(String key) implements StopCondition {
    @Override
    public boolean shouldStop() {
      return STOPPED.contains(key);
    }
  }

  private final TableListing listing;
  private final PrintStream out;
  private final String runId = java.util.UUID.randomUUID().toString();

  /** The tables of the run, by capture instance in lower case: their options as listed. */
  private final Map<String, List<String>> options = new LinkedHashMap<>();

  /** The targets of the run's tables, joined or left, by capture instance in lower case. */
  private final Map<String, Target> targets = new LinkedHashMap<>();

  /** The capture instances removed in this run, in lower case. */
  private final Set<String> left = new HashSet<>();

  /** The lines printed, each once. */
  private final Set<String> said = new HashSet<>();

  /**
   * @param listing where the run's tables are listed
   * @param started the tables the run started with
   * @param out where the lines go
   */
  ListingWatch(TableListing listing, List<JobConfig> started, PrintStream out) {
    this.listing = listing;
    this.out = out;
    Map<String, List<String>> listedNow = new LinkedHashMap<>();
    try {
      for (TableListing.Listed l : listing.read()) {
        if (l.captureInstance() != null) {
          listedNow.put(lower(l.captureInstance()), l.args());
        }
      }
    } catch (IllegalArgumentException e) {
      // Read again at the first poll; the options of the started tables are then the ones listed.
    }
    for (JobConfig config : started) {
      String ci = lower(config.captureInstance());
      options.put(ci, listedNow.get(ci));
      targets.put(ci, Target.of(config));
    }
    WATCHES.put(listing, this);
  }

  /**
   * The tables the run of {@code listing} follows now, when a watch follows it in this JVM ({@link
   * #running()}); empty before its watch starts and after it is forgotten.
   */
  static Optional<List<Target>> running(TableListing listing) {
    ListingWatch watch = WATCHES.get(listing);
    return watch == null ? Optional.empty() : Optional.of(watch.running());
  }

  /**
   * The tables the run follows now: those it started with and those that joined, in that order,
   * without those that left.
   */
  synchronized List<Target> running() {
    List<Target> running = new ArrayList<>();
    targets.forEach(
        (ci, target) -> {
          if (!left.contains(ci)) {
            running.add(target);
          }
        });
    return running;
  }

  /** The stop of {@code captureInstance}'s read: set once its line is removed. */
  StopCondition stopOf(String captureInstance) {
    return new TableStop(runId + "/" + lower(captureInstance));
  }

  /** Forgets this run's stop flags and its tables (after the run). */
  void forget() {
    STOPPED.removeIf(k -> k.startsWith(runId + "/"));
    WATCHES.remove(listing, this);
  }

  /** Reads the listing again; see the class comment. */
  synchronized Changes poll() {
    List<TableListing.Listed> now;
    try {
      now = listing.read();
    } catch (IllegalArgumentException e) {
      sayOnce(CommandLine.firstLine(e) + "; the running tables go on as listed before");
      return new Changes(List.of(), List.of());
    }
    List<Joining> joined = new ArrayList<>();
    Set<String> listed = new HashSet<>();
    Set<String> valid = new HashSet<>();
    for (TableListing.Listed l : now) {
      if (l.refusal() != null) {
        if (l.captureInstance() != null) {
          listed.add(lower(l.captureInstance()));
        }
        sayOnce(l.refusal() + IGNORED);
        continue;
      }
      String ci = lower(l.captureInstance());
      listed.add(ci);
      if (!valid.add(ci)) {
        sayOnce(
            l.origin()
                + ": capture instance "
                + l.captureInstance()
                + " is listed twice (names match ignoring case)"
                + IGNORED);
        continue;
      }
      if (left.contains(ci)) {
        sayOnce(
            l.origin()
                + " ("
                + l.captureInstance()
                + "): listed again after it left this run: the next run continues it from its"
                + " position");
      } else if (options.containsKey(ci)) {
        List<String> was = options.get(ci);
        if (was == null) {
          options.put(ci, l.args());
        } else if (!was.equals(l.args())) {
          sayOnce(
              l.origin()
                  + " ("
                  + l.captureInstance()
                  + "): its options changed while it runs (from '"
                  + String.join(" ", was)
                  + "' to '"
                  + String.join(" ", l.args())
                  + "'): not applied, it goes on with the options it started with; the next run"
                  + " takes the new ones");
        }
      } else {
        Joining joining = check(l);
        if (joining != null) {
          Target target = Target.of(joining.config());
          options.put(ci, l.args());
          targets.put(ci, target);
          MembershipFacts.write(target, MembershipFacts.EVENT_JOINED, l.origin());
          out.printf(
              "Added %s (%s): planning it, then following it beside the running tables%n",
              l.captureInstance(), l.origin());
          joined.add(joining);
        }
      }
    }
    List<String> removed = new ArrayList<>();
    for (Map.Entry<String, Target> e : targets.entrySet()) {
      String ci = e.getKey();
      if (listed.contains(ci) || left.contains(ci)) {
        continue;
      }
      left.add(ci);
      STOPPED.add(runId + "/" + ci);
      Target target = e.getValue();
      MembershipFacts.write(target, MembershipFacts.EVENT_LEFT, listing.name());
      out.printf(
          "Removed %s from %s: its read stops after the batch it is reading; its position is kept"
              + " for a later run%n",
          target.captureInstance(), listing.name());
      removed.add(target.captureInstance());
    }
    return new Changes(joined, removed);
  }

  /**
   * The table of a new line, or null (its refusal printed): its capture instance must be in the
   * source, its targets nobody else's in the run, its configuration pass the checks of a table of
   * many ({@link CdcToDeltaJob#checkOne}).
   */
  private Joining check(TableListing.Listed l) {
    JobConfig config = Objects.requireNonNull(l.config());
    String where = l.origin() + " (" + l.captureInstance() + ")";
    try (CdcClient client = config.clientFactory().open()) {
      client.captureInstances(config.captureInstance());
    } catch (CaptureInstanceNotFoundError e) {
      sayOnce(
          l.origin()
              + ": capture instance '"
              + l.captureInstance()
              + "' not found in the source ("
              + CaptureInstanceCheck.known(e.existing())
              + ")"
              + IGNORED);
      return null;
    } catch (RuntimeException e) {
      sayOnce(where + ": " + CommandLine.firstLine(e) + IGNORED);
      return null;
    }
    Target target = Target.of(config);
    for (Target other : targets.values()) {
      String clash = clash(target, other);
      if (clash != null) {
        sayOnce(
            where
                + ": "
                + clash
                + " of "
                + other.captureInstance()
                + ", a table of this run: give it its own (--target, --appId, --silver)"
                + IGNORED);
        return null;
      }
    }
    try {
      CdcToDeltaJob.checkOne(target, out);
    } catch (RuntimeException e) {
      sayOnce(where + ": " + CommandLine.firstLine(e) + IGNORED);
      return null;
    }
    return new Joining(config, l.origin());
  }

  /** What {@code target} would share with {@code other}, as text, or null. */
  private static String clash(Target target, Target other) {
    if (target.bronze().equals(other.bronze())) {
      return "its bronze table " + target.bronze() + " is the one";
    }
    if (target.appId().equals(other.appId())) {
      return "its app id '" + target.appId() + "' is the one";
    }
    if (target.silver() != null
        && (target.silver().equals(other.silver()) || target.silver().equals(other.bronze()))) {
      return "its silver table " + target.silver() + " is a table";
    }
    return null;
  }

  /**
   * Prints {@code line} the first time it comes, compared without its line numbers: a refused line
   * is not printed again when lines above it are removed and its number changes.
   */
  private void sayOnce(String line) {
    if (said.add(line.replaceAll(" line [0-9]+", ""))) {
      out.println(line);
    }
  }

  private static String lower(String ci) {
    return ci.toLowerCase(Locale.ROOT);
  }
}
