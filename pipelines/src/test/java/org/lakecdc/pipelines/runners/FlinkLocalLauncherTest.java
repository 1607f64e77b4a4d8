package org.lakecdc.pipelines.runners;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Flink configuration {@code mvn -Pflink exec:java} adds to a job's arguments. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FlinkLocalLauncherTest {
  @Test
  void addsAFlinkConfigurationNamingAnEmptyClassPath() throws Exception {
    String[] args = FlinkLocalLauncher.withFlinkConfDir(new String[] {"--runner=FlinkRunner"});
    assertEquals(2, args.length);
    assertEquals("--runner=FlinkRunner", args[0]);
    assertTrue(args[1].startsWith("--flinkConfDir="), args[1]);
    Path dir = Path.of(args[1].substring("--flinkConfDir=".length()));
    String conf = Files.readString(dir.resolve("flink-conf.yaml"));
    assertTrue(conf.contains("pipeline.classpaths: file:"), conf);
    assertTrue(Files.isDirectory(dir.resolve("empty-class-path")));
  }

  @Test
  void aLocalRunsConfigurationAlsoSizesManagedMemory() throws Exception {
    String[] args =
        FlinkLocalLauncher.withFlinkConfDir(
            new String[] {"--runner=FlinkRunner", "--flinkMaster=[local]"});
    Path dir = Path.of(args[2].substring("--flinkConfDir=".length()));
    String conf = Files.readString(dir.resolve("flink-conf.yaml"));
    assertTrue(conf.contains("pipeline.classpaths: file:"), conf);
    assertTrue(conf.matches("(?s).*\\ntaskmanager\\.memory\\.managed\\.size: [0-9]+b\\n.*"), conf);
    String auto =
        Files.readString(
            Path.of(
                    FlinkLocalLauncher.withFlinkConfDir(new String[] {"--runner=FlinkRunner"})[1]
                        .substring("--flinkConfDir=".length()))
                .resolve("flink-conf.yaml"));
    assertFalse(auto.contains("taskmanager.memory.managed.size"), auto);
  }

  @Test
  void keepsAConfigurationTheUserNamed() {
    String[] args = {"--runner=FlinkRunner", "--flinkConfDir=/etc/flink"};
    assertArrayEquals(args, FlinkLocalLauncher.withFlinkConfDir(args));
  }
}
