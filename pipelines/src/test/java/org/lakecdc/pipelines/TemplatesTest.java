package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The submission scripts of templates/ without arguments print their usage text, and only it. */
class TemplatesTest {
  @ParameterizedTest
  @CsvSource({
    "spark-submit.sh, Submits the main job CdcToDelta to Spark with the bundled jar of the spark"
        + " profile.",
    "flink-run.sh, Submits the main job CdcToDelta to a Flink 1.19 cluster with the bundled jar of"
        + " the flink profile."
  })
  void withoutArgumentsAScriptPrintsItsHeaderCommentAndExits2(String script, String first)
      throws Exception {
    Path templates = Path.of("..", "templates").toAbsolutePath().normalize();
    Process process =
        new ProcessBuilder("bash", templates.resolve(script).toString())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(2, process.waitFor(), err);
    assertEquals("", out);
    List<String> lines = err.lines().toList();
    assertEquals(first, lines.get(0));
    assertEquals(
        "docs/runners.md explains each setting and what to change for a real cluster.",
        lines.get(lines.size() - 1));
  }
}
