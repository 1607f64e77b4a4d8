package org.lakecdc.io.mssqlcdc;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CUSTOMERS_CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.ChangeTablePermissionError;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.read.TableFailure;
import org.lakecdc.io.mssqlcdc.source.RowSink;

/**
 * {@code MssqlCdcIO.readAll()}: many capture instances in one splittable DoFn, each with its own
 * batches numbered from 0, its own schema and options; a table's own failure ends that table with
 * one failed batch while the others read to their end (docs/many-tables.md; docs/scenarios.md C260,
 * C264).
 */
public class ReadAllTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  /** Returns the first column's values of a batch's rows (an int key), in read order. */
  static final class Keys implements RowSink<List<Integer>> {
    private final String column;

    Keys(String column) {
      this.column = column;
    }

    @Override
    public List<Integer> write(long sequence, Iterator<Row> rows) {
      List<Integer> ids = new ArrayList<>();
      rows.forEachRemaining(r -> ids.add(r.getInt32(column)));
      return ids;
    }

    @Override
    public Coder<List<Integer>> resultCoder() {
      return ListCoder.of(VarIntCoder.of());
    }
  }

  /**
   * dbo.orders with orders 0..5 (one commit each at T0+i min) and dbo.customers with customers 7
   * and 8 inserted in the commits of orders 1 and 4.
   */
  /** The commit LSNs of {@link #twoTables}, one per order. */
  private final List<Lsn> commits = new ArrayList<>();

  private FakeSqlServer twoTables() throws IOException {
    FakeSqlServer db = FakeScenarios.orders(folder.newFolder("src").toPath());
    FakeScenarios.customers(db);
    for (int i = 0; i < 6; i++) {
      FakeSqlServer.Transaction tx =
          db.transaction(minutes(i))
              .insert(FakeScenarios.ORDERS, FakeScenarios.order(i, "new", i + ".00"));
      if (i == 1 || i == 4) {
        tx.insert("dbo.customers", Map.of("customer_id", i == 1 ? 7 : 8, "name", "c" + i));
      }
      commits.add(tx.commit());
    }
    return db;
  }

  /** Per capture instance, "sequence:keys" of its batches in sequence order (failures as "!"). */
  private static Map<String, List<String>> byTable(Iterable<KV<ChangeBatch, List<Integer>>> all) {
    Map<String, List<KV<ChangeBatch, List<Integer>>>> tables = new TreeMap<>();
    all.forEach(
        kv ->
            tables.computeIfAbsent(kv.getKey().captureInstance(), k -> new ArrayList<>()).add(kv));
    Map<String, List<String>> out = new TreeMap<>();
    tables.forEach(
        (ci, batches) -> {
          batches.sort(java.util.Comparator.comparingLong(kv -> kv.getKey().sequence()));
          List<String> lines = new ArrayList<>();
          for (KV<ChangeBatch, List<Integer>> kv : batches) {
            ChangeBatch b = kv.getKey();
            lines.add(
                b.sequence()
                    + ":"
                    + (b.failed()
                        ? "!" + b.failure().errorClass()
                        : String.valueOf(kv.getValue())));
          }
          out.put(ci, lines);
        });
    return out;
  }

  /** dbo_orders two commits a batch, dbo_customers after order 1's commit. */
  private MssqlCdcIO.ReadAll ordersByTwoAndCustomersAfterOrder1(FakeSqlServer db) {
    return MssqlCdcIO.readAll()
        .with(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(CI).withClientFactory(db.clientFactory()))
                .withMaxCommitsPerBatch(2))
        .with(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(CUSTOMERS_CI).withClientFactory(db.clientFactory()))
                .withStartingLsn(StartingLsn.after(commits.get(1))));
  }

  @Test
  public void eachCaptureInstanceHasItsOwnBatchesAndOptions() throws Exception {
    FakeSqlServer db = twoTables();
    MssqlCdcIO.ReadAll all = ordersByTwoAndCustomersAfterOrder1(db);
    PCollection<KV<ChangeBatch, List<Integer>>> written =
        pipeline.apply(
            all.writeTo(Map.of(CI, new Keys("order_id"), CUSTOMERS_CI, new Keys("customer_id"))));
    PAssert.that(written)
        .satisfies(
            batches -> {
              assertEquals(
                  Map.of(
                      CI,
                      List.of("0:[0, 1]", "1:[2, 3]", "2:[4, 5]"),
                      // After order 1's commit: customer 8 only, all commits in one batch.
                      CUSTOMERS_CI,
                      List.of("0:[8]")),
                  byTable(batches));
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  /**
   * The descriptor form: a read starts when an element names it, so only dbo_customers (named)
   * reads; dbo_orders, configured but never named, reads nothing.
   */
  @Test
  public void onlyTheReadsNamedByAnElementStart() throws Exception {
    FakeSqlServer db = twoTables();
    MssqlCdcIO.ReadAll all = ordersByTwoAndCustomersAfterOrder1(db);
    PCollection<KV<ChangeBatch, List<Integer>>> written =
        pipeline
            .apply(
                org.apache.beam.sdk.transforms.Create.of(CUSTOMERS_CI)
                    .withCoder(org.apache.beam.sdk.coders.StringUtf8Coder.of()))
            .apply(
                all.writeFrom(
                    Map.of(CI, new Keys("order_id"), CUSTOMERS_CI, new Keys("customer_id"))));
    PAssert.that(written)
        .satisfies(
            batches -> {
              assertEquals(Map.of(CUSTOMERS_CI, List.of("0:[8]")), byTable(batches));
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void aTableWhoseChangesWerePurgedEndsWithAFailedBatchAndTheOtherReadsOn()
      throws Exception {
    FakeSqlServer db = twoTables();
    // dbo_orders is read from the start, but cleanup kept only changes from order 3's commit.
    db.cleanup(CI, commits.get(3));
    MssqlCdcIO.ReadAll all =
        MssqlCdcIO.readAll()
            .with(
                MssqlCdcIO.read()
                    .withSourceConfiguration(
                        SourceConfiguration.create(CI).withClientFactory(db.clientFactory()))
                    .withStartingLsn(StartingLsn.after(commits.get(0)))
                    .withMaxCommitsPerBatch(1))
            .with(
                MssqlCdcIO.read()
                    .withSourceConfiguration(
                        SourceConfiguration.create(CUSTOMERS_CI)
                            .withClientFactory(db.clientFactory()))
                    .withMaxCommitsPerBatch(3));
    Lsn firstUnread = commits.get(0).increment();
    PCollection<KV<ChangeBatch, List<Integer>>> written =
        pipeline.apply(
            all.writeTo(Map.of(CI, new Keys("order_id"), CUSTOMERS_CI, new Keys("customer_id"))));
    PAssert.that(written)
        .satisfies(
            batches -> {
              assertEquals(
                  Map.of(
                      CI, List.of("0:!DataLossError"),
                      CUSTOMERS_CI, List.of("0:[7]", "1:[8]")),
                  byTable(batches));
              for (KV<ChangeBatch, List<Integer>> kv : batches) {
                if (kv.getKey().failed()) {
                  assertNull("a failed batch has no sink result", kv.getValue());
                  assertEquals(0, kv.getKey().rows());
                  assertEquals(firstUnread, kv.getKey().fromLsn());
                  assertTrue(
                      kv.getKey().failure().message(),
                      kv.getKey().failure().message().contains("purged by CDC cleanup"));
                }
              }
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void readAllRefusesATableReadTwiceOrTwoSources() throws Exception {
    FakeSqlServer db = twoTables();
    MssqlCdcIO.Read orders =
        MssqlCdcIO.read()
            .withSourceConfiguration(
                SourceConfiguration.create(CI).withClientFactory(db.clientFactory()));
    IllegalArgumentException twice =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                MssqlCdcIO.readAll()
                    .with(orders)
                    .with(
                        orders.withSourceConfiguration(
                            orders.getSourceConfiguration().withCaptureInstance("DBO_ORDERS")))
                    .writeTo(Map.of(CI, new Keys("order_id"), "DBO_ORDERS", new Keys("order_id"))));
    assertEquals("readAll() reads capture instance DBO_ORDERS twice", twice.getMessage());
    IllegalArgumentException sources =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                MssqlCdcIO.readAll()
                    .with(orders)
                    .with(
                        MssqlCdcIO.read()
                            .withSourceConfiguration(
                                SourceConfiguration.create(CUSTOMERS_CI)
                                    .withClientFactory(
                                        new FakeCdcClientFactory(
                                            folder.newFolder("other").toString()))))
                    .writeTo(
                        Map.of(CI, new Keys("order_id"), CUSTOMERS_CI, new Keys("customer_id"))));
    assertEquals(
        "readAll(): the reads of dbo_orders and dbo_customers use different client factories; one"
            + " readAll() reads one source",
        sources.getMessage());
    IllegalArgumentException noSink =
        assertThrows(
            IllegalArgumentException.class,
            () -> MssqlCdcIO.readAll().with(orders).writeTo(Map.of("x", new Keys("order_id"))));
    assertEquals(
        "readAll().writeTo(): no sink for capture instance dbo_orders", noSink.getMessage());
  }

  @Test
  public void c264TableFailuresAreRecognisedByTypeNotByText() {
    assertTrue(
        TableFailure.of(new DataLossError(CI, Lsn.ZERO, Lsn.ZERO, "changes purged")).isPresent());
    assertEquals(
        new TableFailure("SchemaChangedError", "a column changed"),
        TableFailure.of(new SchemaChangedError("a column changed\nsecond line")).orElseThrow());
    assertEquals(
        "CaptureInstanceNotFoundError",
        TableFailure.of(new CaptureInstanceNotFoundError("dbo_x", List.of(CI)))
            .orElseThrow()
            .errorClass());
    assertEquals(
        "ChangeTablePermissionError",
        TableFailure.of(
                new RuntimeException(
                    "wrapped",
                    new ChangeTablePermissionError(CI, "reader", new RuntimeException())))
            .orElseThrow()
            .errorClass());
    assertFalse(
        "text alone is not a data loss",
        TableFailure.of(new RuntimeException("DataLossError: retry with failOnDataLoss=false"))
            .isPresent());
    assertFalse(TableFailure.of(new IllegalStateException("disk full")).isPresent());
  }

  @Test
  public void theBatchCoderKeepsAFailure() throws Exception {
    ChangeBatch failed =
        ChangeBatch.failed(
            CI,
            Lsn.parse("0x0000002A000001000011"),
            Lsn.parse("0x0000002A000001000031"),
            minutes(3),
            4,
            new TableFailure("DataLossError", "changes purged"));
    ChangeBatch decoded =
        CoderUtils.decodeFromByteArray(
            ChangeBatch.coder(), CoderUtils.encodeToByteArray(ChangeBatch.coder(), failed));
    assertEquals(failed, decoded);
    assertTrue(decoded.failed());
    assertEquals("DataLossError: changes purged", decoded.failure().toString());
  }
}
