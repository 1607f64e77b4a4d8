package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * A closed LSN interval {@code [fromLsn, toLsn]} of one capture instance's change table: what one
 * change-table query reads ({@code __$start_lsn BETWEEN fromLsn AND toLsn}). Never empty or
 * inverted.
 *
 * @param captureInstance the instance whose change table {@code cdc.[<ci>_CT]} is read
 * @param fromLsn first LSN, inclusive
 * @param toLsn last LSN, inclusive
 */
record InstanceRange(String captureInstance, Lsn fromLsn, Lsn toLsn) implements Serializable {
  InstanceRange {
    Objects.requireNonNull(captureInstance, "captureInstance");
    if (toLsn.isBefore(fromLsn)) {
      throw new IllegalArgumentException(
          "Inverted range of " + captureInstance + ": [" + fromLsn + ", " + toLsn + "]");
    }
  }

  @Override
  public String toString() {
    return captureInstance + "[" + fromLsn + ", " + toLsn + "]";
  }
}
