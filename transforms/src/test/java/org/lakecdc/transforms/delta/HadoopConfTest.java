package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.util.SerializableUtils;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

class HadoopConfTest {
  @TempDir Path dir;

  @Test
  void entriesSplitAtTheFirstEqualsAndCommaPiecesContinueTheValueBefore() {
    HadoopConf conf =
        HadoopConf.parseEntries(
            "hadoopConf",
            List.of(
                "fs.s3a.endpoint = http://minio:9000",
                "fs.s3a.aws.credentials.provider=a.One",
                "b.Two",
                "x=y=z",
                "fs.s3a.endpoint=http://other:9000"));
    assertEquals(
        Map.of(
            "fs.s3a.endpoint", "http://other:9000",
            "fs.s3a.aws.credentials.provider", "a.One,b.Two",
            "x", "y=z"),
        conf.entries());
  }

  @Test
  void aMalformedEntryIsRefusedNamingTheOptionAndHidingASecretValue() {
    IllegalArgumentException first =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.parseEntries("hadoopConf", List.of("fs.s3a.endpoint")));
    assertEquals(
        "--hadoopConf must be key=value entries such as fs.s3a.endpoint=http://minio:9000, not"
            + " 'fs.s3a.endpoint'",
        first.getMessage());
    IllegalArgumentException blankKey =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.parseEntries("hadoopConf", List.of(" =v")));
    assertEquals(
        "--hadoopConf must be key=value entries such as fs.s3a.endpoint=http://minio:9000, not"
            + " ' =v'",
        blankKey.getMessage());
    IllegalArgumentException secretAlone =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.parseEntries("hadoopConf", List.of("fs.s3a.secret.key")));
    assertEquals(
        "--hadoopConf must be key=value entries such as fs.s3a.endpoint=http://minio:9000, not"
            + " '****'",
        secretAlone.getMessage());
  }

  @Test
  void eachOccurrenceMustStartWithAnEntryWhileCommaPiecesContinueItsValue() {
    HadoopConf.checkOccurrences(
        "hadoopConf", List.of("fs.s3a.aws.credentials.provider=a.One,b.Two", "x=1,y=2"));
    HadoopConf.checkOccurrences("hadoopConf", List.of());
    String refused =
        "--hadoopConf must be key=value entries such as fs.s3a.endpoint=http://minio:9000, not ";
    IllegalArgumentException bare =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.checkOccurrences("hadoopConf", List.of("a=1", "b")));
    assertEquals(refused + "'b'", bare.getMessage());
    IllegalArgumentException leading =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.checkOccurrences("hadoopConf", List.of("a=1", "b,c=2")));
    assertEquals(refused + "'b'", leading.getMessage());
    IllegalArgumentException empty =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.checkOccurrences("hadoopConf", List.of("a=1", "")));
    assertEquals(refused + "''", empty.getMessage());
    IllegalArgumentException secret =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.checkOccurrences("hadoopConf", List.of("a=1", "fs.s3a.secret.key")));
    assertEquals(refused + "'****'", secret.getMessage());
  }

  @Test
  void aFilesPropertyWithoutANameIsRefusedWhetherMissingOrBlank() throws Exception {
    Path attribute =
        Files.writeString(
            dir.resolve("attribute.xml"),
            "<configuration>\n  <property name=\"a.b\" value=\"1\"/>\n</configuration>\n");
    assertEquals(
        Map.of("a.b", "1"), HadoopConf.readFile("hadoopConfFile", attribute.toString()).entries());
    Path none =
        Files.writeString(
            dir.resolve("none.xml"),
            "<configuration>\n  <property><name>a</name><value>1</value></property>\n"
                + "  <property><name>b</name><value>2</value></property>\n"
                + "  <property>\n    <value>3</value>\n  </property>\n</configuration>\n");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.readFile("hadoopConfFile", none.toString()));
    assertEquals(
        "--hadoopConfFile "
            + none
            + ": property 3 (line 4) has no name: give each <property> a non-empty <name> and its"
            + " <value>",
        e.getMessage());
  }

  @Test
  void secretValuesAreNeverInItsText() {
    HadoopConf conf =
        HadoopConf.of(
            Map.of(
                "fs.s3a.access.key", "AKIA1",
                "fs.s3a.secret.key", "s3cr3t",
                "fs.azure.account.key.acct.dfs.core.windows.net", "azkey",
                "fs.gs.auth.service.account.json.keyfile", "/k.json",
                "some.Password", "pw",
                "a.session.TOKEN", "tok",
                "x.credentials.provider", "p",
                "fs.s3a.endpoint", "http://minio:9000"));
    String text = conf.toString();
    for (String secret : List.of("AKIA1", "s3cr3t", "azkey", "/k.json", "pw", "tok", "=p")) {
      assertFalse(text.contains(secret), secret + " in " + text);
    }
    assertEquals(
        "HadoopConf[a.session.TOKEN=****, fs.azure.account.key.acct.dfs.core.windows.net=****,"
            + " fs.gs.auth.service.account.json.keyfile=****, fs.s3a.access.key=****,"
            + " fs.s3a.endpoint=http://minio:9000, fs.s3a.secret.key=****, some.Password=****,"
            + " x.credentials.provider=****]",
        text);
    assertEquals("(none)", HadoopConf.empty().describe());
  }

  @Test
  void aCoreSiteFileIsReadWithHadoopsParserAndEntriesGoOverIt() throws Exception {
    Path file =
        Files.writeString(
            dir.resolve("core-site.xml"),
            "<?xml version=\"1.0\"?>\n<configuration>\n"
                + "<property><name>fs.s3a.endpoint</name><value>http://file:9000</value></property>\n"
                + "<property><name>fs.s3a.path.style.access</name><value>true</value></property>\n"
                + "</configuration>\n");
    HadoopConf fromFile = HadoopConf.readFile("hadoopConfFile", file.toString());
    assertEquals(
        Map.of("fs.s3a.endpoint", "http://file:9000", "fs.s3a.path.style.access", "true"),
        fromFile.entries());
    HadoopConf merged =
        fromFile.overriddenBy(
            HadoopConf.parseEntries("hadoopConf", List.of("fs.s3a.endpoint=http://cli:9000")));
    assertEquals(
        Map.of("fs.s3a.endpoint", "http://cli:9000", "fs.s3a.path.style.access", "true"),
        merged.entries());
  }

  @Test
  void aMissingOrUnparsableFileIsRefusedNamingTheOption() throws Exception {
    String missing = dir.resolve("nope.xml").toString();
    IllegalArgumentException gone =
        assertThrows(
            IllegalArgumentException.class, () -> HadoopConf.readFile("hadoopConfFile", missing));
    assertEquals(
        "--hadoopConfFile "
            + missing
            + " is not a file: pass the path of a Hadoop configuration file (core-site.xml form)",
        gone.getMessage());
    Path garbage = Files.writeString(dir.resolve("bad.xml"), "not xml at all");
    IllegalArgumentException bad =
        assertThrows(
            IllegalArgumentException.class,
            () -> HadoopConf.readFile("hadoopConfFile", garbage.toString()));
    assertTrue(
        bad.getMessage()
            .startsWith(
                "--hadoopConfFile "
                    + garbage
                    + " is not a Hadoop configuration file (core-site.xml form): "),
        bad.getMessage());
    assertEquals(1, bad.getMessage().lines().count(), bad.getMessage());
  }

  @Test
  void itSurvivesJavaSerialization() {
    HadoopConf conf = HadoopConf.of(Map.of("fs.s3a.endpoint", "http://minio:9000"));
    HadoopConf copy = SerializableUtils.clone(conf);
    assertEquals(conf, copy);
    assertEquals(conf.hashCode(), copy.hashCode());
  }

  @Test
  void everyCommitterOfOneConfigurationSharesOneTablesInstanceAndItsWarmSnapshots() {
    // Entries only this test uses: the JVM's instance for them is this test's own.
    Map<String, String> entries = Map.of("lakecdc.test.shared", dir.toString());
    HadoopConf launcher = HadoopConf.of(entries);
    HadoopConf worker = SerializableUtils.clone(launcher);
    DeltaTables first = launcher.tables();
    assertSame(first, worker.tables(), "a deserialized copy gets the same instance");
    assertSame(first, HadoopConf.of(Map.copyOf(entries)).tables());
    assertNotSame(
        first, HadoopConf.of(Map.of("lakecdc.test.shared", dir + "/other")).tables(), "others");

    List<DeltaColumn> columns =
        List.of(
            DeltaColumn.required("batch", OutputType.BIGINT, "Batch"),
            DeltaColumn.nullable("app", OutputType.STRING, "App id"));
    Schema schema = DeltaColumn.toBeamSchema(columns);
    String shared = dir.resolve("facts").toString();
    first.createIfAbsent(shared, TableDefinition.of(TableKind.BRONZE, columns));
    first.append(
        shared,
        schema,
        List.of(Row.withSchema(schema).addValues(1L, "a").build()),
        "a",
        1,
        Map.of());
    long loads = first.snapshotLoads();
    // Another committer (another DoFn, another table's) appends next: no log read again.
    CommitResult b =
        worker
            .tables()
            .append(
                shared,
                schema,
                List.of(Row.withSchema(schema).addValues(1L, "b").build()),
                "b",
                1,
                Map.of());
    assertEquals(CommitResult.Status.COMMITTED, b.status());
    assertEquals(3, b.version());
    assertEquals(0, first.snapshotLoads() - loads);
  }
}
