package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * {@code --hadoopConf} and {@code --hadoopConfFile} reach every Delta table the job opens, on the
 * launcher and in every DoFn on the workers: the tables are {@code lakecdctest://} URIs, a scheme
 * whose FileSystem ({@link SchemeFileSystem}, the local disk) only the job's Hadoop configuration
 * names, with the FileSystem cache off so a worker cannot borrow the launcher's instance.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class HadoopConfJobTest {
  @TempDir Path dir;

  private static final String IMPL = "fs." + SchemeFileSystem.SCHEME + ".impl";
  private static final String NO_CACHE = IMPL + ".disable.cache=true";
  private static final String LOG_STORE =
      "io.delta.kernel.logStore."
          + SchemeFileSystem.SCHEME
          + ".impl=io.delta.storage.LocalLogStore";

  private record Outcome(int code, String err) {}

  private Outcome run(List<String> args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      int code = CdcToDelta.run(args.toArray(String[]::new), err, UnaryOperator.identity());
      return new Outcome(code, bytes.toString(StandardCharsets.UTF_8));
    }
  }

  private static List<String> args(JobFixture f, String... more) {
    String scheme = SchemeFileSystem.SCHEME + "://";
    List<String> all =
        new ArrayList<>(
            List.of(
                "--fakePath=" + f.dir.resolve("source"),
                "--captureInstance=" + JobFixture.CI,
                "--target=" + scheme + f.bronze,
                "--factsTable=" + scheme + f.facts,
                "--controlTable=" + scheme + f.control,
                "--bootstrap=false"));
    all.addAll(List.of(more));
    return all;
  }

  private static List<String> withoutBatch(List<String> bronze) {
    return bronze.stream()
        .map(s -> s.substring(0, s.lastIndexOf('/')))
        .sorted()
        .collect(Collectors.toList());
  }

  @Test
  void withoutTheConfigurationTheSchemeHasNoFileSystem() throws java.io.IOException {
    // As in a fresh JVM: no file system of the scheme cached by another test's run.
    org.apache.hadoop.fs.FileSystem.closeAll();
    JobFixture f = JobFixture.history(dir);
    Outcome o = run(args(f));
    assertEquals(JobExit.FAILED, o.code(), o.err());
    assertEquals(
        List.of(
            "error: no Hadoop FileSystem for lakecdctest:// paths on the class path: add the jar"
                + " of a Hadoop FileSystem for 'lakecdctest' (Hadoop 3.3.4) to the job's class path"
                + " and name its class with --hadoopConf=fs.lakecdctest.impl=<class>, or use a"
                + " local path or file:/ URI"),
        o.err().lines().toList());
    assertFalse(Files.exists(Path.of(f.bronze)));
  }

  @Test
  void hadoopConfEntriesReachTheLauncherAndEveryWorker() {
    JobFixture f = JobFixture.history(dir);
    Outcome o =
        run(
            args(
                f,
                "--hadoopConf=" + IMPL + "=" + SchemeFileSystem.class.getName() + "," + NO_CACHE,
                "--hadoopConf=" + LOG_STORE));
    assertEquals(JobExit.OK, o.code(), o.err());
    // The tables are on the local disk under the scheme's paths, written by the workers' DoFns.
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
    assertEquals(List.of("0:28:0x0000002A0000010000A1"), f.factBatches());
  }

  @Test
  void aCoreSiteFileReachesTheWorkersAndHadoopConfIsSetOverIt() throws Exception {
    JobFixture f = JobFixture.history(dir);
    Path coreSite =
        Files.writeString(
            dir.resolve("core-site.xml"),
            "<?xml version=\"1.0\"?>\n<configuration>\n"
                + property(IMPL, "org.example.NoSuchFileSystem")
                + property(IMPL + ".disable.cache", "true")
                + property(
                    "io.delta.kernel.logStore." + SchemeFileSystem.SCHEME + ".impl",
                    "io.delta.storage.LocalLogStore")
                + "</configuration>\n");
    // The file alone names a class that does not exist: the run fails on it.
    Outcome bad = run(args(f, "--hadoopConfFile=" + coreSite));
    assertEquals(JobExit.FAILED, bad.code(), bad.err());
    assertTrue(bad.err().contains("org.example.NoSuchFileSystem"), bad.err());

    // --hadoopConf wins over the file; the file's other entries still reach every table.
    Outcome good =
        run(
            args(
                f,
                "--hadoopConfFile=" + coreSite,
                "--hadoopConf=" + IMPL + "=" + SchemeFileSystem.class.getName()));
    assertEquals(JobExit.OK, good.code(), good.err());
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
  }

  private static String property(String name, String value) {
    return "  <property><name>" + name + "</name><value>" + value + "</value></property>\n";
  }

  @Test
  void badEntriesAndFilesAreRefusedNamingTheOptionWithoutTheirSecrets() throws Exception {
    JobFixture f = JobFixture.history(dir);
    Outcome entry = run(args(f, "--hadoopConf=fs.s3a.endpoint"));
    assertEquals(JobExit.BAD_OPTION, entry.code());
    assertEquals(
        List.of(
            "error: --hadoopConf must be key=value entries such as"
                + " fs.s3a.endpoint=http://minio:9000, not 'fs.s3a.endpoint'"),
        entry.err().lines().toList());

    Outcome empty = run(args(f, "--hadoopConf==hunter2"));
    assertEquals(JobExit.BAD_OPTION, empty.code());
    assertEquals(
        List.of(
            "error: --hadoopConf must be key=value entries such as"
                + " fs.s3a.endpoint=http://minio:9000, not '=hunter2'"),
        empty.err().lines().toList());

    Path missing = dir.resolve("no-such-core-site.xml");
    Outcome file = run(args(f, "--hadoopConfFile=" + missing));
    assertEquals(JobExit.BAD_OPTION, file.code());
    assertEquals(
        List.of(
            "error: --hadoopConfFile "
                + missing
                + " is not a file: pass the path of a Hadoop configuration file (core-site.xml"
                + " form)"),
        file.err().lines().toList());

    Path garbage = Files.writeString(dir.resolve("garbage.xml"), "<configuration><property>");
    Outcome unparsable = run(args(f, "--hadoopConfFile=" + garbage));
    assertEquals(JobExit.BAD_OPTION, unparsable.code());
    List<String> lines = unparsable.err().lines().toList();
    assertEquals(1, lines.size(), unparsable.err());
    assertTrue(
        lines
            .get(0)
            .startsWith(
                "error: --hadoopConfFile "
                    + garbage
                    + " is not a Hadoop configuration file (core-site.xml form): "),
        unparsable.err());
    assertFalse(Files.exists(Path.of(f.bronze)), "nothing was written");
  }

  @Test
  void aRepeatedHadoopConfWithoutKeyValueIsRefusedNotGluedToTheEntryBefore() {
    JobFixture f = JobFixture.history(dir);
    String refused =
        "error: --hadoopConf must be key=value entries such as fs.s3a.endpoint=http://minio:9000,"
            + " not ";
    Outcome second = run(args(f, "--hadoopConf=a=1", "--hadoopConf=b"));
    assertEquals(JobExit.BAD_OPTION, second.code(), second.err());
    assertEquals(List.of(refused + "'b'"), second.err().lines().toList());

    Outcome third =
        run(
            args(
                f,
                "--hadoopConf=fs.x=1,fs.y=2",
                "--hadoopConf=fs.z=3",
                "--hadoopConf=fs.s3a.endpoint,fs.w=4"));
    assertEquals(JobExit.BAD_OPTION, third.code(), third.err());
    assertEquals(List.of(refused + "'fs.s3a.endpoint'"), third.err().lines().toList());

    Outcome empty = run(args(f, "--hadoopConf=a=1", "--hadoopConf="));
    assertEquals(JobExit.BAD_OPTION, empty.code(), empty.err());
    assertEquals(List.of(refused + "''"), empty.err().lines().toList());
    assertFalse(Files.exists(Path.of(f.bronze)), "nothing was written");
    assertFalse(Files.exists(Path.of(f.facts)), "nothing was written");
  }

  @Test
  void aPropertyWithoutANameInTheFileIsRefusedNamingItsPlace() throws Exception {
    JobFixture f = JobFixture.history(dir);
    Path noName =
        Files.writeString(
            dir.resolve("no-name-site.xml"),
            "<?xml version=\"1.0\"?>\n<configuration>\n"
                + property(IMPL, SchemeFileSystem.class.getName())
                + "  <property><value>orphan</value></property>\n"
                + "</configuration>\n");
    Outcome missing = run(args(f, "--hadoopConfFile=" + noName));
    assertEquals(JobExit.BAD_OPTION, missing.code(), missing.err());
    assertEquals(
        List.of(
            "error: --hadoopConfFile "
                + noName
                + ": property 2 (line 4) has no name: give each <property> a non-empty <name> and"
                + " its <value>"),
        missing.err().lines().toList());

    Path blank =
        Files.writeString(
            dir.resolve("blank-name-site.xml"),
            "<?xml version=\"1.0\"?>\n<configuration>\n"
                + "  <property>\n    <name> </name>\n    <value>x</value>\n  </property>\n"
                + property(IMPL, SchemeFileSystem.class.getName())
                + "</configuration>\n");
    Outcome empty = run(args(f, "--hadoopConfFile=" + blank));
    assertEquals(JobExit.BAD_OPTION, empty.code(), empty.err());
    assertEquals(
        List.of(
            "error: --hadoopConfFile "
                + blank
                + ": property 1 (line 3) has no name: give each <property> a non-empty <name> and"
                + " its <value>"),
        empty.err().lines().toList());
    assertFalse(Files.exists(Path.of(f.bronze)), "nothing was written");
    assertFalse(Files.exists(Path.of(f.facts)), "nothing was written");
  }

  @Test
  void aSecretValueIsInNeitherTheConfigurationsTextNorTheOptionsDisplayData() {
    JobFixture f = JobFixture.history(dir);
    CdcToDeltaOptions options =
        PipelineOptionsFactory.fromArgs(
                args(f, "--hadoopConf=fs.s3a.secret.key=hunter2,fs.s3a.endpoint=http://minio:9000")
                    .toArray(String[]::new))
            .as(CdcToDeltaOptions.class);
    JobConfig config = CdcToDeltaLauncher.config(options);
    assertEquals(
        HadoopConf.of(
            java.util.Map.of(
                "fs.s3a.secret.key", "hunter2", "fs.s3a.endpoint", "http://minio:9000")),
        config.hadoopConf());
    assertFalse(config.toString().contains("hunter2"), config.toString());
    assertTrue(
        config.toString().contains("fs.s3a.endpoint=http://minio:9000, fs.s3a.secret.key=****"),
        config.toString());
    String display = DisplayData.from(options).toString();
    assertFalse(display.contains("hunter2"), display);
  }
}
