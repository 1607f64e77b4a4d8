package org.lakecdc.io.mssqlcdc.fake;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.beam.sdk.util.Sleeper;

/**
 * Whole-file writes: the content goes to a temporary file in the target's directory, then {@link
 * FileReplacer} swaps it in. A replace refused with {@link AccessDeniedException} (a reader holding
 * the file open on Windows) is retried up to {@link #MAX_ATTEMPTS} attempts in all, waiting {@code
 * 10 ms * 2^(attempt-1)} between attempts; after the last refusal the error surfaces as an {@link
 * UncheckedIOException} whose cause is the last {@link AccessDeniedException}.
 */
final class AtomicFiles {
  /** Attempts of one replace, the first included. */
  static final int MAX_ATTEMPTS = 5;

  private static final long FIRST_BACKOFF_MILLIS = 10;

  /** Writes content to an open writer. */
  @FunctionalInterface
  interface Body {
    void writeTo(Writer out) throws IOException;
  }

  private final FileReplacer replacer;
  private final Sleeper sleeper;

  AtomicFiles(FileReplacer replacer, Sleeper sleeper) {
    this.replacer = replacer;
    this.sleeper = sleeper;
  }

  /**
   * Gives a new file the permissions of an ordinary file ({@code rw-r--r--}) where the file system
   * has POSIX permissions: temporary files are created owner-only, and the rename keeps that.
   */
  private static void readableByAll(Path file) throws IOException {
    if (Files.getFileStore(file).supportsFileAttributeView("posix")) {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    }
  }

  /**
   * Writes {@code target} whole.
   *
   * @throws UncheckedIOException when writing fails or the replace is refused {@link #MAX_ATTEMPTS}
   *     times; the temporary file is removed and the target is left as it was
   */
  void write(Path target, Body body) {
    Path temp = null;
    try {
      temp = Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
      readableByAll(temp);
      try (Writer out =
          new BufferedWriter(
              new OutputStreamWriter(Files.newOutputStream(temp), StandardCharsets.UTF_8),
              1 << 16)) {
        body.writeTo(out);
      }
      replace(temp, target);
      temp = null;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + target + ": " + e.getMessage(), e);
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException ignored) {
          // The failure being reported matters more than a leftover temporary file.
        }
      }
    }
  }

  /**
   * Writes {@code target} as a copy of its current bytes (if it exists) followed by {@code lines},
   * one per line: an append that is still a whole-file replace.
   */
  void append(Path target, Iterable<String> lines) {
    write(
        target,
        out -> {
          if (Files.exists(target)) {
            try (java.io.Reader in = Files.newBufferedReader(target, StandardCharsets.UTF_8)) {
              in.transferTo(out);
            }
            if (!endsWithNewline(target)) {
              out.write('\n');
            }
          }
          for (String line : lines) {
            out.write(line);
            out.write('\n');
          }
        });
  }

  private static boolean endsWithNewline(Path file) throws IOException {
    try (java.nio.channels.SeekableByteChannel channel = Files.newByteChannel(file)) {
      long size = channel.size();
      if (size == 0) {
        return true;
      }
      java.nio.ByteBuffer last = java.nio.ByteBuffer.allocate(1);
      channel.position(size - 1);
      channel.read(last);
      return last.get(0) == '\n';
    }
  }

  private void replace(Path temp, Path target) throws IOException {
    for (int attempt = 1; ; attempt++) {
      try {
        replacer.replace(temp, target);
        return;
      } catch (AccessDeniedException e) {
        if (attempt >= MAX_ATTEMPTS) {
          AccessDeniedException last =
              new AccessDeniedException(
                  target.toString(),
                  null,
                  "replace refused " + MAX_ATTEMPTS + " times (is a reader holding it open?)");
          last.initCause(e);
          throw last;
        }
        try {
          sleeper.sleep(FIRST_BACKOFF_MILLIS << (attempt - 1));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new IOException("Interrupted while retrying the replace of " + target, e);
        }
      }
    }
  }
}
