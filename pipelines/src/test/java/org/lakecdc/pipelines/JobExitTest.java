package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The error line of {@link JobExit#describe} over the cause chains the jobs really meet (produced
 * by Delta Kernel, Hadoop and Parquet where they can be, not rebuilt by hand), and the
 * uncaught-exception handler.
 */
class JobExitTest {
  @TempDir Path dir;

  private static Throwable thrownBy(Runnable r) {
    return assertThrows(Throwable.class, r::run);
  }

  @Test
  void aTableInALocationThatRefusesDirectoriesNamesTheDirectoryAndTheParent() {
    // /proc refuses new directories for every user, root included (CI runs as root, for whom a
    // chmod'ed directory stays writable); Kernel's chain is the same as for a read-only directory.
    Throwable failure =
        thrownBy(
            () ->
                DeltaTables.create()
                    .createIfAbsent("/proc/lakecdc-no-such-dir/orders", FactsTable.definition()));
    assertEquals(
        "cannot create the directory /proc/lakecdc-no-such-dir/orders/_delta_log of a Delta table:"
            + " the file system at /proc refused it (read-only?); choose a location the job may"
            + " write (--target, --factsTable, --controlTable) or make /proc writable",
        JobExit.describe(failure));
  }

  @Test
  void aTableUnderAFileNamesTheFile() throws IOException {
    Path file = Files.writeString(dir.resolve("afile"), "x");
    Throwable failure =
        thrownBy(
            () ->
                DeltaTables.create()
                    .createIfAbsent(
                        file.resolve("sub/orders").toString(), FactsTable.definition()));
    assertEquals(
        "cannot create the directory "
            + file.resolve("sub/orders/_delta_log")
            + " of a Delta table: "
            + file
            + " is a file, not a directory; choose a location the job may write (--target,"
            + " --factsTable, --controlTable) or make "
            + file
            + " writable",
        JobExit.describe(failure));
  }

  @Test
  void aSchemeWithoutItsFileSystemNamesTheDependency() {
    assertEquals(
        "no Hadoop FileSystem for s3a:// paths on the class path (class"
            + " org.apache.hadoop.fs.s3a.S3AFileSystem not found): add"
            + " org.apache.hadoop:hadoop-aws:3.3.4 and software.amazon.awssdk:s3 with"
            + " software.amazon.awssdk:apache5-client (the log store's SDK; -Ps3 brings all"
            + " three) to the job's class path (the default build,"
            + " -Pspark and -Pflink bundle none; with spark-submit, --packages)",
        JobExit.describe(
            thrownBy(
                () ->
                    DeltaTables.create()
                        .createIfAbsent("s3a://bucket/x", FactsTable.definition()))));
    assertEquals(
        "no Hadoop FileSystem for abfss:// paths on the class path (class"
            + " org.apache.hadoop.fs.azurebfs.SecureAzureBlobFileSystem not found): add"
            + " org.apache.hadoop:hadoop-azure:3.3.4 to the job's class path (the default build,"
            + " -Pspark and -Pflink bundle none; with spark-submit, --packages)",
        JobExit.describe(
            thrownBy(
                () ->
                    DeltaTables.create()
                        .createIfAbsent(
                            "abfss://c@a.dfs.core.windows.net/x", FactsTable.definition()))));
    assertEquals(
        "no Hadoop FileSystem for gs:// paths on the class path: add"
            + " com.google.cloud.bigdataoss:gcs-connector (its hadoop3 build) to the job's class"
            + " path (the default build, -Pspark and -Pflink bundle none; with spark-submit,"
            + " --packages)",
        JobExit.describe(
            thrownBy(
                () -> DeltaTables.create().createIfAbsent("gs://b/x", FactsTable.definition()))));
    assertEquals(
        "no Hadoop FileSystem for s3:// paths on the class path: write s3a:// paths and add"
            + " org.apache.hadoop:hadoop-aws:3.3.4 to the job's class path (the default build,"
            + " -Pspark and -Pflink bundle none)",
        JobExit.describe(
            thrownBy(
                () -> DeltaTables.create().createIfAbsent("s3://b/x", FactsTable.definition()))));
  }

  /**
   * Disk full while a data file is written: at its first write (Kernel wraps the IOException as
   * "Failed to write the Parquet file"), at its close, where a small file such as a snapshot part's
   * is written (Parquet wraps it as "Unable to close resource", without the file), or as Hadoop's
   * local file system reports it (FSError). Each names the table, as a failure of a pipeline's
   * worker.
   */
  @ParameterizedTest
  @ValueSource(strings = {"write", "close", "fserror"})
  void aFullDiskSaysNoSpaceLeftOnDeviceWithTheTable(String mode) {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", FullDiskFileSystem.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    conf.set(FullDiskFileSystem.MODE, mode);
    DeltaTables tables = DeltaTables.create(conf);
    String table = dir.resolve("bronze").toString();
    tables.createIfAbsent(
        table,
        TableDefinition.of(
            TableKind.FACTS, List.of(DeltaColumn.nullable("id", OutputType.INT, null))));
    Schema schema = Schema.builder().addInt32Field("id").build();
    UncheckedIOException failure =
        assertThrows(
            UncheckedIOException.class,
            () ->
                tables.writeDataFiles(
                    table, schema, List.of(Row.withSchema(schema).addValue(1).build())));
    assertEquals(
        "Cannot write data files of Delta table " + table + ": No space left on device",
        failure.getMessage());
    assertEquals(
        "the run failed: No space left on device writing Delta table "
            + table
            + ": free space there, or choose a location on another disk, then run again (what was"
            + " committed stays committed; the rerun continues from it)",
        JobExit.describe(new Pipeline.PipelineExecutionException(failure)));
  }

  @Test
  void outOfMemoryNamesTheHeapAndWhatToChange() {
    long mib = Runtime.getRuntime().maxMemory() / (1024 * 1024);
    long suggested = Math.max(1024, (mib * 2 + 511) / 512 * 512);
    String expected =
        String.format(
            "out of memory (OutOfMemoryError: Java heap space) with a maximum heap of %,d MiB:"
                + " give the JVM more (java -Xmx%dm …; for mvn exec:java, MAVEN_OPTS=-Xmx%dm) or"
                + " read fewer commits per batch (--maxCommitsPerBatch; one transaction is always"
                + " read whole)",
            mib, suggested, suggested);
    OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    assertEquals(expected, JobExit.describe(oom));
    // The DirectRunner's run() wraps an Error from a worker in a RuntimeException.
    assertEquals(expected, JobExit.describe(new RuntimeException(oom)));
    assertEquals(
        "out of memory (OutOfMemoryError: Metaspace): raise -XX:MaxMetaspaceSize (java"
            + " -XX:MaxMetaspaceSize=1g …; for mvn exec:java, MAVEN_OPTS=-XX:MaxMetaspaceSize=1g)",
        JobExit.describe(new OutOfMemoryError("Metaspace")));
  }

  private static long recurse(long depth) {
    return recurse(depth + 1) + 1;
  }

  @Test
  void aStackOverflowNamesWhereAndTheStackOption() {
    StackOverflowError so = assertThrows(StackOverflowError.class, () -> recurse(0));
    assertEquals(
        "the run failed: stack overflow (StackOverflowError in"
            + " org.lakecdc.pipelines.JobExitTest.recurse): give each thread a larger stack (java"
            + " -Xss16m …; for mvn exec:java, MAVEN_OPTS=-Xss16m)",
        JobExit.describe(new Pipeline.PipelineExecutionException(so)));
  }

  @Test
  void otherFailuresKeepTheirFirstLineAndPointToVerbose() {
    assertEquals(
        "the run failed: Changes the target needs were purged",
        JobExit.describe(
            new Pipeline.PipelineExecutionException(
                new DataLossError(
                    "dbo_orders",
                    org.lakecdc.io.mssqlcdc.lsn.Lsn.ZERO,
                    org.lakecdc.io.mssqlcdc.lsn.Lsn.ZERO,
                    "Changes the target needs were purged\nmore detail"))));
    assertEquals(
        "the run failed: IllegalStateException: boom (--verbose prints the stack trace)",
        JobExit.describe(
            new Pipeline.PipelineExecutionException(
                new RuntimeException(new IllegalStateException("boom\nsecond line")))));
    assertEquals(
        "java.lang.NullPointerException (--verbose prints the stack trace)",
        JobExit.describe(new NullPointerException()));
  }

  @Test
  void anErrorOnAnyThreadEndsTheJvmWithOneLineAndCode1() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    List<Integer> exits = new ArrayList<>();
    List<Throwable> passedOn = new ArrayList<>();
    Thread.UncaughtExceptionHandler handler =
        JobExit.handler((t, e) -> passedOn.add(e), err, exits::add);
    handler.uncaughtException(new Thread("worker"), new IllegalStateException("a library's"));
    assertEquals(List.of(), exits, "an exception on another thread does not end the job");
    assertEquals(1, passedOn.size());
    handler.uncaughtException(new Thread("worker"), new StackOverflowError());
    assertEquals(List.of(JobExit.FAILED), exits);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(1, out.lines().count(), out);
    assertEquals(
        "error: stack overflow (StackOverflowError in"
            + " org.lakecdc.pipelines.JobExitTest.anErrorOnAnyThreadEndsTheJvmWithOneLineAndCode1):"
            + " give each thread a larger stack (java -Xss16m …; for mvn exec:java,"
            + " MAVEN_OPTS=-Xss16m)",
        out.strip());
  }
}
