package org.lakecdc.io.mssqlcdc.fake;

import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The order of a change table's rows: {@code (__$start_lsn, __$command_id, __$seqval,
 * __$operation)}, a missing command id first.
 */
record OrderKey(Lsn start, Integer commandId, Lsn seqval, int operation)
    implements Comparable<OrderKey> {
  @Override
  public int compareTo(OrderKey other) {
    int c = start == other.start ? 0 : start.compareTo(other.start);
    if (c != 0) {
      return c;
    }
    if (commandId == null || other.commandId == null) {
      c = commandId == null ? (other.commandId == null ? 0 : -1) : 1;
    } else {
      c = Integer.compare(commandId, other.commandId);
    }
    if (c != 0) {
      return c;
    }
    c = seqval.compareTo(other.seqval);
    return c != 0 ? c : Integer.compare(operation, other.operation);
  }
}
