package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code .ci/run}, the CI entry point, with stand-ins for {@code mvn}, {@code apt-get} and {@code
 * sudo} first on the path: it installs Debian's {@code chromium} when {@code /usr/bin/chromium} is
 * missing (non-interactive, quiet), then runs exactly README's test command, {@code mvn -B verify},
 * from the repository's root with {@code CI=true}.
 */
class CiRunTest {
  @TempDir Path dir;

  private Path stub(String name, String body) throws Exception {
    Path file = dir.resolve("bin").resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    return file;
  }

  @Test
  void ciRunInstallsChromiumWhenMissingThenRunsTheReadmeTestCommandWithCiSet() throws Exception {
    Path calls = dir.resolve("calls");
    String log = " >> '" + calls + "'";
    stub("mvn", "echo \"mvn $* in $PWD with CI=$CI\"" + log);
    stub("apt-get", "echo \"apt-get $* (DEBIAN_FRONTEND=$DEBIAN_FRONTEND)\"" + log);
    stub("sudo", "\"$@\"");
    Path root = Path.of("").toAbsolutePath().getParent();
    ProcessBuilder run =
        new ProcessBuilder("bash", root.resolve(".ci/run").toString())
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    run.environment().remove("CI");
    run.environment().put("PATH", dir.resolve("bin") + ":" + System.getenv("PATH"));
    Process process = run.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    process.waitFor(1, TimeUnit.MINUTES);
    assertEquals(0, process.exitValue(), out);
    String install =
        Files.isExecutable(Path.of("/usr/bin/chromium"))
            ? ""
            : "apt-get update -qq (DEBIAN_FRONTEND=noninteractive)\n"
                + "apt-get install -y -qq --no-install-recommends chromium"
                + " (DEBIAN_FRONTEND=noninteractive)\n";
    assertEquals(
        install + "mvn -B verify in " + root + " with CI=true\n", Files.readString(calls), out);
  }
}
