package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.targets.SilverPlan;

/**
 * The silver options of the main job ({@code --silver}, {@code --silverTemplate}, {@code --keys},
 * {@code --silverWaveRows}) and of {@link ApplyChanges}: every refused value is one {@code error:}
 * line naming the option, exit code 2, and nothing is written (docs/scenarios.md C170, C174).
 */
class SilverOptionsTest {
  @TempDir Path dir;

  /** dbo.orders (JobFixture's) and dbo.customers (id, name), both with CDC. */
  private void source() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(JobFixture.ORDERS);
    f.db.createTable(
        "dbo.customers",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(20)")),
        List.of("id"));
    f.db.enableCdc("dbo.customers");
    f.insertCommit(0, 2);
  }

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  private List<String> args(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--factsTable=" + delta("facts"),
                "--controlTable=" + delta("control"),
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(List.of(more));
    return args;
  }

  /** The error lines and exit code of a main-job run of {@code args}. */
  private String refused(List<String> args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = CdcToDelta.run(args.toArray(String[]::new), e, UnaryOperator.identity());
    }
    String text = err.toString(StandardCharsets.UTF_8);
    assertEquals(2, code, text);
    assertFalse(Files.exists(dir.resolve("delta")), "nothing is written: " + text);
    return text.strip();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--silverWaveRows=0|error: --silverWaveRows must be a positive integer, not '0'",
        "--keys=order_id,,status|error: --keys must list captured columns separated by commas"
            + " (order_id or o_id,line), without an empty one: 'order_id,,status'",
        "--keys=order_id,ORDER_ID|error: --keys lists the column ORDER_ID twice:"
            + " 'order_id,ORDER_ID'",
        "--granularity=hourly|error: --granularity must be 'minute', 'hour' or 'day', not 'hourly'"
      })
  void c174ABadSilverValueIsRefusedBeforeAnythingIsWritten(String option, String error) {
    source();
    assertEquals(error, refused(args("--silver=" + delta("silver"), option)));
  }

  @Test
  void keysWithoutASilverTableAreRefused() {
    source();
    assertEquals(
        "error: --keys are the key columns of a silver table: pass --silver (or --silverTemplate"
            + " with --tables) with it",
        refused(args("--keys=order_id")));
  }

  @Test
  void silverMustBeATableOfItsOwn() {
    source();
    assertEquals(
        "error: --silver must be a table of its own, not the --target " + delta("dbo_orders"),
        refused(args("--target=" + delta("dbo_orders"), "--silver=" + delta("dbo_orders"))));
  }

  @Test
  void aSilverTemplateNeedsTables() {
    source();
    assertEquals(
        "error: --silverTemplate applies to the tables of --tables or --tablesFile; for the one"
            + " table of --captureInstance give --silver",
        refused(args("--silverTemplate=" + delta("silver_{ci}"))));
  }

  @Test
  void aSilverTemplateMustContainTheCaptureInstance() {
    source();
    assertEquals(
        "error: --silverTemplate='"
            + delta("silver")
            + "' must contain '{ci}' (the capture"
            + " instance)",
        refused(args("--tables=dbo_orders,dbo_customers", "--silverTemplate=" + delta("silver"))));
  }

  @Test
  void oneSilverForManyTablesIsRefused() {
    source();
    assertEquals(
        "error: --silver names one table's silver; with --tables or --tablesFile use"
            + " --silverTemplate (with {ci}), or a table's own --silver in --tablesFile",
        refused(args("--tables=dbo_orders,dbo_customers", "--silver=" + delta("silver"))));
  }

  /** C170: a key that is not a captured column, found when the source is looked at. */
  @Test
  void c170AKeyThatIsNotACapturedColumnIsRefusedBeforeAnythingIsWritten() {
    source();
    assertEquals(
        "error: --keys: id is not a captured column of dbo_orders (captured: order_id, status,"
            + " amount, updated_at)",
        refused(args("--silver=" + delta("silver"), "--keys=id", "--bootstrap=false")));
  }

  /** Many tables: the keys are checked for every table before anything is written. */
  @Test
  void manyTablesCheckEveryTablesKeysFirst() {
    source();
    assertEquals(
        "error: --keys: order_id is not a captured column of dbo_customers (captured: id, name)",
        refused(
            args(
                "--tables=dbo_orders,dbo_customers",
                "--targetTemplate=" + delta("{ci}"),
                "--silverTemplate=" + delta("silver_{ci}"),
                "--keys=order_id",
                "--bootstrap=false")));
  }

  /** Another table's bronze at the silver path is refused before this table's bronze is written. */
  @Test
  void anotherTablesBronzeAsSilverIsRefusedBeforeAnythingIsWritten() {
    source();
    org.lakecdc.transforms.delta.DeltaTables tables =
        org.lakecdc.transforms.delta.DeltaTables.create();
    String other = dir.resolve("other").resolve("dbo_customers").toString();
    tables.createIfAbsent(
        other,
        org.lakecdc.transforms.bronze.BronzeTable.definition(
            org.apache.beam.sdk.schemas.Schema.builder().addInt32Field("id").build()));
    assertEquals(
        "error: --silver: "
            + other
            + " is a bronze table, not a silver table: give silver a path of its own; nothing"
            + " was written",
        refused(args("--silver=" + other, "--target=" + delta("dbo_orders"))));
  }

  /** A table's own --keys in --tablesFile is that table's (and checked against its columns). */
  @Test
  void aTablesOwnKeysInATablesFileAreChecked() throws Exception {
    source();
    Path file = dir.resolve("tables.txt");
    Files.writeString(file, "dbo_orders\ndbo_customers --keys=name,order_id\n");
    assertEquals(
        "error: --keys: order_id is not a captured column of dbo_customers (captured: id, name)",
        refused(
            args(
                "--tablesFile=" + file,
                "--targetTemplate=" + delta("{ci}"),
                "--silverTemplate=" + delta("silver_{ci}"),
                "--bootstrap=false")));
  }

  /** Two tables whose silver paths coincide (a table's own --silver in --tablesFile). */
  @Test
  void twoTablesCannotShareASilverTable() throws Exception {
    source();
    Path file = dir.resolve("tables.txt");
    Files.writeString(
        file,
        "dbo_orders --silver="
            + delta("silver")
            + "\ndbo_customers --silver="
            + delta("silver")
            + "\n");
    assertEquals(
        "error: --tables: dbo_orders and dbo_customers would both write the table "
            + delta("silver")
            + ": give each table its own silver (a --silverTemplate with {ci}); nothing was"
            + " written",
        refused(
            args(
                "--tablesFile=" + file, "--targetTemplate=" + delta("{ci}"), "--bootstrap=false")));
  }

  /** C170: an instance without a unique index and no --keys names --keys and the cause. */
  @Test
  void c170AnInstanceWithoutAUniqueIndexNeedsKeys() {
    CdcClientFactory factory = () -> client(List.of());
    OptionRefusedException e =
        assertThrows(
            OptionRefusedException.class,
            () -> SilverPlan.resolve(factory, "dbo_x", List.of(), List.of("a", "b")));
    assertEquals(
        "--keys: capture instance dbo_x has no unique index (no primary key or index CDC uses),"
            + " so silver's key columns are not known: pass --keys=<captured columns>, e.g."
            + " --keys=a",
        e.getMessage());
    assertEquals(
        new SilverPlan.Resolved(List.of("dbo_x", "dbo_x_v2"), List.of("b")),
        SilverPlan.resolve(factory, "DBO_X", List.of("B"), List.of("a", "b")));
  }

  /** The source's key columns and every instance of the table, lower-cased. */
  @Test
  void keysAndInstancesComeFromTheSource() {
    CdcClientFactory factory = () -> client(List.of("Id"));
    assertEquals(
        new SilverPlan.Resolved(List.of("dbo_x", "dbo_x_v2"), List.of("id")),
        SilverPlan.resolve(factory, "dbo_x_V2", List.of(), List.of("id", "note")));
  }

  /** A client whose table dbo.x has the instances dbo_x and dbo_X_v2, keyed by {@code keys}. */
  private static CdcClient client(List<String> keys) {
    List<CaptureInstance> instances =
        List.of(
            new CaptureInstance("dbo_x", "dbo", "x", Optional.empty(), Optional.empty(), keys),
            new CaptureInstance("dbo_X_v2", "dbo", "x", Optional.empty(), Optional.empty(), keys));
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, a) ->
                switch (method.getName()) {
                  case "captureInstances" -> instances;
                  case "close" -> null;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }

  /** The error lines and exit code of an ApplyChanges run of {@code args}. */
  private String applyRefused(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      List<String> all = new ArrayList<>();
      if (List.of(args).stream().noneMatch(a -> a.startsWith("--fakePath="))) {
        all.add("--fakePath=" + dir.resolve("source"));
      }
      all.add("--logFile=" + dir.resolve("run.log"));
      all.addAll(List.of(args));
      code = ApplyChanges.run(all.toArray(String[]::new), o, e);
    }
    String text = err.toString(StandardCharsets.UTF_8);
    assertEquals(2, code, text);
    assertFalse(Files.exists(dir.resolve("delta")), "nothing is written: " + text);
    return text.strip();
  }

  @Test
  void applyChangesRefusesBadOptions() {
    source();
    String bronze = "--bronze=" + delta("dbo_orders");
    assertEquals(
        "error: --silver must name the silver table to apply to (a path or URI, e.g."
            + " lakecdc-demo/delta/silver/dbo_orders)",
        applyRefused(bronze));
    assertEquals(
        "error: --granularity must be 'minute', 'hour' or 'day', not 'hourly'",
        applyRefused(bronze, "--silver=" + delta("silver"), "--granularity=hourly"));
    assertEquals(
        "error: --silverWaveRows must be a positive integer, not '-1'",
        applyRefused(bronze, "--silver=" + delta("silver"), "--silverWaveRows=-1"));
    assertEquals(
        "error: --silverTemplate applies to the tables of --tables; for the one table of"
            + " --captureInstance give --silver",
        applyRefused(bronze, "--silverTemplate=" + delta("s_{ci}")));
    assertEquals(
        "error: --silverTemplate='" + delta("s") + "' must contain '{ci}' (the capture instance)",
        applyRefused("--tables=dbo_orders", "--silverTemplate=" + delta("s")));
    assertEquals(
        "error: --bronze names one table; with --tables each table has its own (use"
            + " --bronzeTemplate and --silverTemplate)",
        applyRefused("--tables=dbo_orders", bronze, "--silverTemplate=" + delta("s_{ci}")));
    assertEquals(
        "error: --silver must be a table of its own, not the bronze table " + delta("dbo_orders"),
        applyRefused(bronze, "--silver=" + delta("dbo_orders")));
    assertEquals(
        "error: --fakePath "
            + dir.resolve("none")
            + " holds no simulator database (no"
            + " server.json; docs/fake-format.md describes the directory): give the --fakePath"
            + " the bronze tables were read from",
        applyRefused(bronze, "--silver=" + delta("silver"), "--fakePath=" + dir.resolve("none")));
  }
}
