package org.lakecdc.io.mssqlcdc.client;

import java.util.Iterator;

/**
 * An iterator over rows streamed from the database (a JDBC result set, a file being read). Never a
 * list in memory. Close it to release the connection or file; {@link #close()} does not throw
 * checked exceptions.
 */
public interface CloseableIterator<T> extends Iterator<T>, AutoCloseable {
  @Override
  void close();
}
