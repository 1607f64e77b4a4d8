package org.lakecdc.transforms.delta;

import io.delta.storage.S3SingleDriverLogStore;
import java.io.IOException;

/**
 * An S3 store that does not honour conditional writes ({@code If-None-Match: *}): it refused them
 * or ignored them. Delta commits from more than one writer could overwrite each other there, so
 * {@link S3ConditionalLogStore} writes nothing and fails with this; its message names the setting
 * that accepts the risk instead. Never retried ({@link KernelRetries}).
 */
public final class ConditionalWritesUnsupportedException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * The setting whose log store commits without conditional writes (one writer at a time), as the
   * jar in use reads it: Kernel's key and Delta's {@code S3SingleDriverLogStore} by their names at
   * run time, so in the Spark jar, which relocates both packages, the relocated ones ({@code
   * lakecdc.shaded.io.delta.kernel.logStore.s3a.impl=lakecdc.shaded.io.delta.storage.…}).
   */
  public static final String SINGLE_WRITER_SETTING =
      S3ConditionalLogStore.CONF_KEY + "=" + S3SingleDriverLogStore.class.getName();

  ConditionalWritesUnsupportedException(S3ClientSettings settings, String bucket, String what) {
    super(
        "the S3 store at "
            + settings.describe()
            + " (bucket "
            + bucket
            + ") does not support conditional writes ("
            + what
            + "), so commits of two writers to one Delta table could overwrite each other: use a"
            + " store that supports If-None-Match: * on PUT (AWS S3, recent MinIO), or, if only"
            + " one process at a time ever writes these tables, set --hadoopConf="
            + SINGLE_WRITER_SETTING);
  }
}
