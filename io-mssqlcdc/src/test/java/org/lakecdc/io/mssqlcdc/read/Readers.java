package org.lakecdc.io.mssqlcdc.read;

import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;

import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.Resolved;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/** The change reads and reading DoFns the read tests build, over the simulator's {@code CI}. */
final class Readers {
  private Readers() {}

  /** The source of {@code CI} through {@code factory}. */
  static SourceConfiguration source(CdcClientFactory factory) {
    return SourceConfiguration.create(CI).withClientFactory(factory);
  }

  /** The source of {@code CI} in {@code db}. */
  static SourceConfiguration source(FakeSqlServer db) {
    return source(db.clientFactory());
  }

  /** A change read of {@code CI} through {@code factory}, with the defaults. */
  static MssqlCdcIO.Read read(CdcClientFactory factory) {
    return MssqlCdcIO.read().withSourceConfiguration(source(factory));
  }

  /** A change read of {@code CI} in {@code db}, with the defaults. */
  static MssqlCdcIO.Read read(FakeSqlServer db) {
    return read(db.clientFactory());
  }

  /** The bounded reading DoFn of {@code read}, emitting rows and batches. */
  static ReadChangesDoFn<Row> bounded(MssqlCdcIO.Read read) {
    return ReadChangesDoFn.emitting(false, Resolved.spec(read));
  }

  /** The continuous reading DoFn of {@code read}, emitting rows and batches. */
  static ReadChangesDoFn<Row> continuous(MssqlCdcIO.Read read) {
    return ReadChangesDoFn.emitting(true, Resolved.spec(read));
  }
}
