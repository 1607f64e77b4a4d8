package org.lakecdc.io.mssqlcdc.client;

import java.nio.file.Path;

/** {@link CdcClientContract} on the simulator: runs in every build. */
class FileBackedCdcClientContractTest extends CdcClientContract {
  @Override
  CdcTestDatabase openDatabase(Path tempDir) {
    return new FakeCdcTestDatabase(tempDir.resolve("server"));
  }
}
