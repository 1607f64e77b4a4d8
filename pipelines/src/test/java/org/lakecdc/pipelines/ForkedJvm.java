package org.lakecdc.pipelines;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Tests that run a job in a JVM of its own: the java command and this module's class path. */
final class ForkedJvm {
  private ForkedJvm() {}

  /**
   * {@code java <jvmOptions> -cp <this module's test class path>}: this JDK's java, test and main
   * classes, then the dependencies Maven wrote to {@code target/test-classpath.txt}.
   */
  static List<String> javaCommand(List<String> jvmOptions) throws IOException {
    Path module = Path.of("").toAbsolutePath();
    String dependencies =
        Files.readString(module.resolve("target/test-classpath.txt"), StandardCharsets.UTF_8)
            .strip();
    String classpath =
        String.join(
            File.pathSeparator,
            module.resolve("target/test-classes").toString(),
            module.resolve("target/classes").toString(),
            dependencies);
    List<String> command =
        new java.util.ArrayList<>(
            List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", classpath));
    return command;
  }
}
