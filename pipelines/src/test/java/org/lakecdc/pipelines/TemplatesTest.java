package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The submission scripts of templates/ without arguments print their usage text, and only it; the
 * many-tables file lists the demo's tables.
 */
class TemplatesTest {
  @ParameterizedTest
  @CsvSource({
    "spark-submit.sh, Submits the main job CdcToDelta to Spark with the bundled jar of spark-jar/.",
    "flink-run.sh, Submits the main job CdcToDelta to a Flink 1.19 cluster with the bundled jar of"
        + " flink-jar/."
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

  /**
   * templates/many-tables.options names every capture instance of the demo database once, in the
   * order they are enabled, each line's options in the {@code --name=value} form.
   */
  @Test
  void theManyTablesFileListsTheFiveDemoTables() throws Exception {
    Path file = Path.of("..", "templates", "many-tables.options").toAbsolutePath().normalize();
    List<List<String>> tables =
        Files.readAllLines(file).stream()
            .map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("#"))
            .map(l -> List.of(l.split("\\s+")))
            .toList();
    assertEquals(
        org.lakecdc.pipelines.demo.DemoDatabase.CAPTURE_INSTANCES,
        tables.stream().map(t -> t.get(0)).toList());
    assertEquals(
        List.of(List.of(), List.of("--maxCommitsPerBatch=20"), List.of(), List.of(), List.of()),
        tables.stream().map(t -> t.subList(1, t.size())).toList());
  }
}
