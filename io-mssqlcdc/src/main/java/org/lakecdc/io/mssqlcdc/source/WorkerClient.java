package org.lakecdc.io.mssqlcdc.source;

import java.io.Serializable;
import org.apache.beam.sdk.annotations.Internal;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * A reading DoFn's one {@link CdcClient}: opened on first use and kept for the DoFn instance's life
 * (as KafkaIO caches its consumers), closed at teardown, and dropped after a failed read, since a
 * client may be broken then (a dropped connection) and the retried bundle should open a new one.
 * Serialized with its DoFn as its factory only; the open client is not. Not thread-safe: one per
 * DoFn instance, as a DoFn instance runs one bundle at a time.
 *
 * <p>Internal: the reading DoFns of every read mode use it.
 */
@Internal
public final class WorkerClient implements Serializable {
  private static final long serialVersionUID = 1L;

  private final CdcClientFactory factory;
  private transient @Nullable CdcClient client;

  /**
   * A holder that opens its client with {@code factory} on first use.
   *
   * @param factory opens the client
   */
  public WorkerClient(CdcClientFactory factory) {
    this.factory = factory;
  }

  /**
   * The open client, opening it on first use ({@link CdcClientFactory#open}).
   *
   * @return the client, owned by this holder (callers do not close it)
   */
  public CdcClient get() {
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
  public void close() {
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
  public void discardAfter(RuntimeException failure) {
    try {
      close();
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }
}
