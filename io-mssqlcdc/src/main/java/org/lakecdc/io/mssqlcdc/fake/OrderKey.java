package org.lakecdc.io.mssqlcdc.fake;

import java.util.Comparator;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The order of a change table's rows: {@code (__$start_lsn, __$command_id, __$seqval,
 * __$operation)}, a missing command id first.
 */
record OrderKey(Lsn start, Integer commandId, Lsn seqval, int operation)
    implements Comparable<OrderKey> {
  private static final Comparator<OrderKey> ORDER =
      Comparator.comparing(OrderKey::start)
          .thenComparing(OrderKey::commandId, Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(OrderKey::seqval)
          .thenComparingInt(OrderKey::operation);

  @Override
  public int compareTo(OrderKey other) {
    return ORDER.compare(this, other);
  }
}
