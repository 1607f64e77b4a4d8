package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.status.StatusModel.*;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.ObjectStores;
import org.lakecdc.pipelines.cli.SqlServerSource;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.pipelines.demo.DemoDatabase;
import org.lakecdc.pipelines.options.StatusFormat;
import org.lakecdc.pipelines.options.StatusOptions;
import org.lakecdc.pipelines.status.StatusJson;
import org.lakecdc.pipelines.status.StatusModel.Report;
import org.lakecdc.pipelines.status.StatusPage;
import org.lakecdc.pipelines.status.StatusPrometheus;
import org.lakecdc.pipelines.status.StatusReader;
import org.lakecdc.pipelines.status.StatusText;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * The {@code status} command: where every table the main job writes stands, read from its facts and
 * control tables with Delta Kernel (no Spark, no Beam pipeline). One table per distinct {@code
 * (stream family, target)} of the facts table, in that order: the family of an app id {@code x} is
 * {@code x} itself and its generations {@code x.g<n>} (a re-snapshot after data loss starts
 * generation n under {@code x.g<n>}, docs/behaviour.md §9.1), so a re-snapshotted target is one
 * table. Each with:
 *
 * <ul>
 *   <li>its target (the bronze table's path), the family's app id, its current generation (the
 *       highest of its batch, {@code bootstrap}, {@code resnapshot} and {@code data_skipped} rows
 *       and of its stored position) with that generation's app id, and its capture instance (from
 *       the bronze table's position, {@link StreamPosition#BRONZE_DOMAIN}, else from the job's
 *       position in the facts table, else from its newest {@code snapshot_open} row that names
 *       one);
 *   <li>its position: the end LSN and end commit time (UTC) of the current generation's last batch
 *       (the facts batch row written last), or of its stored position when that generation has no
 *       batch yet (a bootstrap or a re-snapshot only);
 *   <li>the last batch's id and when it was written ({@code written_at}, UTC);
 *   <li>rows today: the sum of {@code rows} of the current generation's batch rows written on the
 *       current UTC day of the clock ({@code [00:00, 24:00)});
 *   <li>the verdict {@code finalized_until} of its control row and the granularity that verdict was
 *       computed with (the granularities whose truncation of the row's {@code end_commit_ts} gives
 *       {@code finalized_until}: the control table does not store it);
 *   <li>the lag in seconds: the source's newest commit time (the commit of its {@code max_lsn})
 *       minus the position's commit time when a source is given or the demo source exists, else the
 *       last batch's {@code source_max_commit_ts - end_commit_ts};
 *   <li>its failure: the newest {@value FactsTable#EVENT_TABLE_FAILED} row of the current
 *       generation's app id when it was written after that generation's last batch and its {@code
 *       resnapshot} row ({@code detail} {@code "<ErrorClass>: <message>"}, {@code end_lsn} where it
 *       failed): a failure of an older generation was recovered by the re-snapshot that started a
 *       newer one;
 *   <li>its newest bootstrap snapshot (rows, LSN S, when; a chunked one's chunk count), and its
 *       open snapshot: the {@code snapshot_open} row with the highest S among the chunked ones,
 *       else among the full ones, that no {@code bootstrap}/{@code resnapshot} row of the stream
 *       family ({@code app_id} and {@code app_id.g<n>}) with {@code max_lsn >= S} completes; a full
 *       open does not count next to an incomplete chunked open (docs/behaviour.md §6.10). A chunked
 *       one shows its mode, kind, generation, when it was opened, and from its {@code
 *       snapshot_plan} and {@code snapshot_chunk} rows ({@link ChunkedSnapshotFacts}) the chunks
 *       done of those planned, the complete waves, the rows so far and the newest chunk's {@code
 *       written_at}.
 *   <li>its re-snapshots after data loss: how many generations a {@code resnapshot} row completed,
 *       the newest (generation, mode, rows, S, when, the lost gap {@code lost_from_ts} to {@code
 *       lost_to_ts}), and the newest {@code resnapshot_failed} row when no re-snapshot completed
 *       after it;
 *   <li>its {@code data_skipped} rows ({@code --onDataLoss=skip}): how many, and the newest gap;
 *   <li>the lost periods of its control row ({@link LostPeriod}): spans no verdict covers.
 * </ul>
 *
 * <p>Memory is bounded by the number of tables, not of facts rows: the facts table is read one data
 * file at a time, a Parquet batch at a time, and only per-table aggregates are kept.
 *
 * <p>Exit codes ({@link JobExit}): 0 printed; 2 a bad option (one {@code error:} line naming it,
 * e.g. a facts table path that holds no Delta table); 1 a failure reading the tables.
 */
public final class Status {

  /** The event that opens a snapshot, completed by a {@code bootstrap} row at or after its S. */
  static final String EVENT_SNAPSHOT_OPEN = ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN;

  private Status() {}

  /** Entry point; {@link StatusOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(
        () -> run(args, System.out, System.err, Clock.systemUTC(), DemoDatabase.DEFAULT_DIRECTORY));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param out where the status goes
   * @param err where {@code error:} and {@code warning:} lines go
   * @param clock the clock of "today" and of the time the status was read
   * @param defaultSource the simulator directory read when neither {@code --fakePath} nor {@code
   *     --connectionUrl} is given, if it holds a simulator database
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  public static int run(
      String[] args, PrintStream out, PrintStream err, Clock clock, Path defaultSource) {
    StatusOptions options;
    DeltaTables tables;
    String facts;
    String control;
    Optional<CdcClientFactory> source;
    try {
      options = CommandLine.parse(args, StatusOptions.class, "docs/status.md");
      org.lakecdc.transforms.delta.HadoopConf.checkOccurrences(
          "hadoopConf", CommandLine.values(args, "hadoopConf"));
      source = source(options, defaultSource);
      ObjectStores.check(
          TableReading.conf(options),
          TableReading.tablePath("factsTable", options.getFactsTable()),
          options.getControlTable() == null || options.getControlTable().isBlank()
              ? null // refused below, after the facts table, as before
              : TableReading.tablePath("controlTable", options.getControlTable()));
      tables = TableReading.tables(options);
      facts = TableReading.existingTable(tables, "factsTable", options.getFactsTable());
      requireKind(tables, "factsTable", facts, TableKind.FACTS);
      control = TableReading.tablePath("controlTable", options.getControlTable());
      if (!CommandLine.values(args, "controlTable").isEmpty()) {
        CommandLine.existingTable(
            tables,
            "controlTable",
            control,
            null,
            "give the control table the job wrote (leave --controlTable out to print without"
                + " verdicts when there is none)");
      }
      out = TableReading.output(options, out);
    } catch (IllegalArgumentException e) {
      err.println("error: " + TableReading.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      Optional<Commit> newest = source.flatMap(factory -> newestCommit(factory, err));
      Report report = StatusReader.read(tables, facts, control, newest, clock, source.isPresent());
      if (options.getFormat() == StatusFormat.PROMETHEUS) {
        out.print(StatusPrometheus.render(report));
      } else if (options.getJson() || options.getFormat() == StatusFormat.JSON) {
        out.println(
            new ObjectMapper()
                .writerWithDefaultPrettyPrinter()
                .writeValueAsString(StatusJson.json(report)));
      } else {
        StatusText.printText(report, out);
      }
      if (options.getHtml() != null) {
        StatusPage.write(Path.of(options.getHtml()), report);
      }
      out.flush();
      if (options.getOutput() != null) {
        out.close();
      }
    } catch (Throwable t) {
      return JobExit.report(t, err, options.getVerbose());
    }
    return JobExit.OK;
  }

  /** Refuses a table whose kind property names another kind than {@code kind}. */
  private static void requireKind(DeltaTables tables, String option, String path, TableKind kind) {
    Optional<String> actual = tables.describe(path).kind();
    if (actual.isPresent() && !actual.get().equalsIgnoreCase(kind.propertyValue())) {
      throw new IllegalArgumentException(
          "--"
              + option
              + " "
              + path
              + " is a "
              + actual.get()
              + " table, not a "
              + kind.propertyValue()
              + " table: give the "
              + kind.propertyValue()
              + " table the job wrote");
    }
  }

  // ------------------------------------------------------------------------------------------
  // The source
  // ------------------------------------------------------------------------------------------

  /**
   * The source whose newest commit the lag is measured against: {@code --connectionUrl}, {@code
   * --fakePath}, or the default simulator directory when it holds a database; empty otherwise.
   *
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  static Optional<CdcClientFactory> source(StatusOptions o, Path defaultSource) {
    SourceTimeZone zone = SqlServerSource.checkTimeoutAndZone(o);
    if (o.getConnectionUrl() == null) {
      String serverOnly =
          o.getUser() != null
              ? "--user"
              : o.getPasswordEnv() != null
                  ? "--passwordEnv"
                  : o.getPasswordFile() != null
                      ? "--passwordFile"
                      : !zone.isAuto() ? "--sourceTimeZone" : null;
      if (serverOnly != null) {
        throw new IllegalArgumentException(
            serverOnly
                + " applies to --connectionUrl (a real SQL Server); add --connectionUrl, or leave "
                + serverOnly
                + " out");
      }
      if (o.getFakePath() == null) {
        return TableReading.isSimulator(defaultSource)
            ? Optional.of(new FakeCdcClientFactory(defaultSource.toString()))
            : Optional.empty();
      }
      Path path = Path.of(o.getFakePath());
      if (o.getFakePath().isBlank() || !TableReading.isSimulator(path)) {
        throw new IllegalArgumentException(
            "--fakePath "
                + o.getFakePath()
                + " holds no simulator database (no server.json; docs/fake-format.md describes the"
                + " directory): give the job's --fakePath, or leave it out");
      }
      return Optional.of(new FakeCdcClientFactory(path.toString()));
    }
    if (o.getFakePath() != null) {
      throw new IllegalArgumentException(
          "--fakePath is for the simulator and --connectionUrl for a real SQL Server: pass one of"
              + " them, not both");
    }
    return Optional.of(SqlServerSource.factory(o, zone, null));
  }

  /**
   * The source's newest commit (its {@code max_lsn} and that LSN's commit time), or empty with a
   * {@code warning:} line when the source cannot be read or has no commit.
   */
  private static Optional<Commit> newestCommit(CdcClientFactory factory, PrintStream err) {
    try (CdcClient client = factory.open()) {
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty()) {
        return Optional.empty();
      }
      return client.lastCommitAtOrBefore(max.get());
    } catch (RuntimeException e) {
      err.println(
          "warning: the source cannot be read ("
              + TableReading.firstLine(e)
              + "): each table's lag is its last batch's");
      return Optional.empty();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reading the tables
  // ------------------------------------------------------------------------------------------

}
