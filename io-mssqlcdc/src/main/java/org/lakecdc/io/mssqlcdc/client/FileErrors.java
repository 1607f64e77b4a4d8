package org.lakecdc.io.mssqlcdc.client;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Locale;

/** Why a file could not be read, in the operating system's words, for one-line messages. */
public final class FileErrors {
  private FileErrors() {}

  /**
   * The reason of {@code e} without the path (which the caller's message names): {@code "no such
   * file"}, {@code "permission denied"}, {@code "not a directory"}, {@code "not UTF-8 text"}, or
   * what the operating system said ({@code "is a directory"}), starting in lower case.
   *
   * @param e what reading the file threw
   * @return the reason, never empty
   */
  public static String reason(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NotDirectoryException) {
      return "not a directory";
    }
    if (e instanceof CharacterCodingException) {
      return "not UTF-8 text";
    }
    String reason =
        e instanceof FileSystemException fse && fse.getReason() != null
            ? fse.getReason()
            : e.getMessage();
    if (reason == null || reason.isBlank()) {
      return e.getClass().getSimpleName();
    }
    return reason.substring(0, 1).toLowerCase(Locale.ROOT) + reason.substring(1);
  }
}
