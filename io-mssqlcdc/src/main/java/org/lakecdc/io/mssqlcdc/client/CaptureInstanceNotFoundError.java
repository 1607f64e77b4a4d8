package org.lakecdc.io.mssqlcdc.client;

import java.util.List;

/**
 * A capture instance name that the database does not have (or that the login cannot see, or whose
 * enable capture has not processed yet: {@code sys.fn_cdc_get_min_lsn} returns {@code 0x00...}).
 * The message lists the capture instances that do exist.
 */
public class CaptureInstanceNotFoundError extends CdcException {
  private static final long serialVersionUID = 1L;

  private final String captureInstance;
  private final List<String> existing;

  public CaptureInstanceNotFoundError(String captureInstance, List<String> existing) {
    super(
        "Capture instance '"
            + captureInstance
            + "' not found (not enabled, no permission, or capture has not processed its"
            + " creation yet); the database has "
            + (existing.isEmpty() ? "no capture instances" : "capture instances " + existing));
    this.captureInstance = captureInstance;
    this.existing = List.copyOf(existing);
  }

  /** The name that was asked for. */
  public String captureInstance() {
    return captureInstance;
  }

  /** The capture instances that exist, in the order the database lists them. */
  public List<String> existing() {
    return existing;
  }
}
