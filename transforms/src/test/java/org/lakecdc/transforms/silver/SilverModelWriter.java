package org.lakecdc.transforms.silver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.VacuumResult;

/**
 * Drives silver's engine and maintenance for an independent reader (the {@code delta-spark-check}
 * module's {@code SilverModelTest} runs it in its own JVM, then reads silver with delta-spark).
 * Usage: {@code SilverModelWriter <directory> <phase>}: reads the operations of {@code
 * <directory>/ops-<phase>.txt}, one per line, applies them in order to the silver table {@code
 * <directory>/silver} (created when absent), and writes one line per operation to {@code
 * <directory>/results-<phase>.txt}: the table version after it, then what it did.
 *
 * <ul>
 *   <li>{@code merge <lsn> <image>[;<image>...]}: one {@link SilverMerge#merge} wave (app id {@code
 *       lakecdc-silver}, the next transaction version), images {@code U:<id>:<name>} (an upsert) or
 *       {@code D:<id>} (a delete), {@code <id>} an integer or {@code null}, all at {@code
 *       _start_lsn} = {@code <lsn>} as 20 hex digits. Result: {@code <version> <inserted> <updated>
 *       <deleted>}.
 *   <li>{@code compact}: {@link SilverMaintenance#compact} by key {@code id}, threshold 0.2, target
 *       1 MiB. Result: {@code <version> <files removed> <files added>}.
 *   <li>{@code vacuum <version>}: {@link SilverMaintenance#vacuum} with the cutoff at the commit
 *       time of that version (its {@code commitInfo.timestamp}; that version and later ones stay
 *       readable). Result: {@code <version> <files deleted>}.
 * </ul>
 *
 * Silver's columns: {@code id INT} (the key, nullable), {@code name STRING}, {@code _start_lsn},
 * {@code _commit_ts} (always NULL here).
 */
public final class SilverModelWriter {
  static final Schema SCHEMA =
      DeltaColumn.toBeamSchema(
          List.of(
              DeltaColumn.nullable("id", OutputType.INT, "the key"),
              DeltaColumn.nullable("name", OutputType.STRING, null),
              DeltaColumn.required(SilverTable.START_LSN, OutputType.STRING, null),
              DeltaColumn.nullable(SilverTable.COMMIT_TS, OutputType.TIMESTAMP_NTZ, null)));

  private SilverModelWriter() {}

  /**
   * Runs one phase.
   *
   * @param args the directory and the phase name
   * @throws IOException when the operations cannot be read or the results written
   */
  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    String phase = args[1];
    String path = dir.resolve("silver").toString();
    DeltaTables tables = DeltaTables.create();
    tables.createIfAbsent(path, SilverTable.definition(SCHEMA));
    SilverMerge merge = new SilverMerge(tables);
    long txn = tables.latestTransactionVersion(path, "lakecdc-silver").orElse(0);
    List<String> results = new ArrayList<>();
    for (String line :
        Files.readAllLines(dir.resolve("ops-" + phase + ".txt"), StandardCharsets.UTF_8)) {
      String[] parts = line.strip().split(" ");
      switch (parts[0]) {
        case "merge" -> {
          String lsn = String.format("0x%020X", Long.parseLong(parts[1]));
          List<SilverImage> wave = new ArrayList<>();
          for (String image : parts[2].split(";")) {
            String[] fields = image.split(":", 3);
            Integer id = fields[1].equals("null") ? null : Integer.valueOf(fields[1]);
            boolean delete = fields[0].equals("D");
            Row row =
                Row.withSchema(SCHEMA).addValues(id, delete ? null : fields[2], lsn, null).build();
            wave.add(delete ? SilverImage.delete(row) : SilverImage.upsert(row));
          }
          WaveResult result =
              merge.merge(path, List.of("id"), wave, "lakecdc-silver", ++txn, Map.of());
          results.add(
              result.version()
                  + " "
                  + result.inserted()
                  + " "
                  + result.updated()
                  + " "
                  + result.deleted());
        }
        case "compact" -> {
          SilverMaintenance.CompactionResult result =
              new SilverMaintenance(tables)
                  .compact(
                      path,
                      List.of("id"),
                      new SilverMaintenance.CompactionOptions(0.2, 1024 * 1024, 100));
          results.add(result.version() + " " + result.filesRemoved() + " " + result.filesAdded());
        }
        case "vacuum" -> {
          long version = Long.parseLong(parts[1]);
          long cutoff =
              tables.history(path).stream()
                  .filter(c -> c.version() == version)
                  .findFirst()
                  .orElseThrow()
                  .timestampMillis();
          VacuumResult result =
              new SilverMaintenance(
                      tables, Clock.fixed(Instant.ofEpochMilli(cutoff), ZoneOffset.UTC))
                  .vacuum(path, Duration.ZERO, false);
          results.add(tables.version(path) + " " + result.files().size());
        }
        default -> throw new IllegalArgumentException("Unknown operation: " + line);
      }
    }
    Files.write(dir.resolve("results-" + phase + ".txt"), results, StandardCharsets.UTF_8);
  }
}
