package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.Objects;

/**
 * One data file of a table version, as the tables' {@code scanFiles} lists it: what a worker needs
 * to read it (the tables' {@code readScanFile}). Small (the file's {@code add} action); pipelines
 * carry it in {@link ScanFileCoder}, not Java serialization.
 *
 * @param tablePath the table path or URI
 * @param version the table version the file was listed at
 * @param json the Kernel scan file row, as JSON
 */
public record ScanFile(String tablePath, long version, String json) implements Serializable {
  /**
   * Checks the components.
   *
   * @param tablePath the table path or URI
   * @param version the table version
   * @param json the scan file row as JSON
   * @throws NullPointerException when the path or the JSON is null
   */
  public ScanFile {
    Objects.requireNonNull(tablePath, "tablePath");
    Objects.requireNonNull(json, "json");
  }
}
