package org.lakecdc.transforms.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.delta.kernel.exceptions.KernelEngineException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.junit.jupiter.api.Test;

/**
 * A path whose file system is not on the class path fails at once: no later attempt finds the file
 * system, so {@link KernelRetries} does not retry it (it did, as an I/O failure, for about 15 to 20
 * seconds of backoff before the job said which dependency to add).
 */
class KernelRetriesFatalTest {
  @Test
  void aSchemeWithoutAFileSystemIsNotRetried() {
    UnsupportedFileSystemException gs =
        new UnsupportedFileSystemException("No FileSystem for scheme \"gs\"");
    assertFalse(KernelRetries.isRetryable(gs));
    assertFalse(KernelRetries.isRetryable(new UncheckedIOException(gs)));
  }

  @Test
  void aFileSystemClassMissingFromTheClassPathIsNotRetried() {
    // As Kernel's engine reports an s3a:// path without hadoop-aws: Hadoop's RuntimeException over
    // the ClassNotFoundException, under an I/O failure.
    RuntimeException hadoop =
        new RuntimeException(
            new ClassNotFoundException("Class org.apache.hadoop.fs.s3a.S3AFileSystem not found"));
    assertFalse(
        KernelRetries.isRetryable(
            new KernelEngineException(
                "Resolving path s3a://bucket/x", new IOException("resolving", hadoop))));
  }

  @Test
  void aStepFailingForAMissingFileSystemRunsOnce() {
    AtomicInteger attempts = new AtomicInteger();
    UncheckedIOException failure =
        assertThrows(
            UncheckedIOException.class,
            () ->
                KernelRetries.call(
                    "gs://b/x",
                    "create the table",
                    () -> {
                      attempts.incrementAndGet();
                      throw new UncheckedIOException(
                          new UnsupportedFileSystemException("No FileSystem for scheme \"gs\""));
                    }));
    assertEquals(1, attempts.get());
    assertEquals("No FileSystem for scheme \"gs\"", failure.getCause().getMessage());
  }
}
