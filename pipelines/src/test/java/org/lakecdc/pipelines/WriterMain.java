package org.lakecdc.pipelines;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The entry point of a table writer that delta-spark-check runs in a JVM of its own ({@code
 * SampleJob}, {@code ExtremeValuesJob}): one argument, the output directory; exit 0 once the tables
 * are committed, 1 with the stack trace on a failure, 2 on a wrong argument count. It always exits:
 * the DirectRunner may leave non-daemon threads behind.
 */
final class WriterMain {
  /** Writes the tables under a directory. */
  interface Writer {
    void write(Path dir) throws IOException;
  }

  private WriterMain() {}

  static void run(String name, String[] args, Writer writer) {
    if (args.length != 1) {
      System.err.println("usage: " + name + " <directory>");
      System.exit(2);
      return;
    }
    try {
      writer.write(Path.of(args[0]));
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }
}
