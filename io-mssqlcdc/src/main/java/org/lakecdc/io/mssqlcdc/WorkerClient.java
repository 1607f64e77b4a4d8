package org.lakecdc.io.mssqlcdc;

import java.io.Serializable;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * A reading DoFn's one {@link CdcClient}: opened on first use and kept for the DoFn instance's life
 * (as KafkaIO caches its consumers), closed at teardown, and dropped after a failed read, since a
 * client may be broken then (a dropped connection) and the retried bundle should open a new one.
 * Serialized with its DoFn as its factory only; the open client is not.
 */
final class WorkerClient implements Serializable {
  private static final long serialVersionUID = 1L;

  private final CdcClientFactory factory;
  private transient @Nullable CdcClient client;

  WorkerClient(CdcClientFactory factory) {
    this.factory = factory;
  }

  /** The open client, opening it on first use ({@link CdcClientFactory#open}). */
  CdcClient get() {
    CdcClient open = client;
    if (open == null) {
      open = factory.open();
      client = open;
    }
    return open;
  }

  /**
   * Closes the client, if open; the next {@link #get} opens a new one.
   *
   * @throws RuntimeException what closing it threw
   */
  void close() {
    CdcClient open = client;
    client = null;
    if (open != null) {
      open.close();
    }
  }

  /**
   * Closes the client after {@code failure}, adding a failure to close to it as suppressed; the
   * next {@link #get} opens a new one.
   *
   * @param failure what the read threw
   */
  void discardAfter(RuntimeException failure) {
    try {
      close();
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }
}
