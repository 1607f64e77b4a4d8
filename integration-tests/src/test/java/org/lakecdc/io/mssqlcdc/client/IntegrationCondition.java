package org.lakecdc.io.mssqlcdc.client;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Runs a test class only in the integration profile ({@code -Pit} sets the system property {@code
 * lakecdc.it=true}) and only where Testcontainers finds a Docker engine; otherwise every test of
 * the class reports skipped with the reason.
 */
public final class IntegrationCondition implements ExecutionCondition {
  public static final String PROPERTY = "lakecdc.it";

  private static Boolean docker;

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    if (!Boolean.getBoolean(PROPERTY)) {
      return ConditionEvaluationResult.disabled(
          "integration profile off: `mvn -B -Pit verify` on a machine with a Docker engine runs"
              + " these tests against SQL Server 2022 in a container");
    }
    if (!dockerAvailable()) {
      return ConditionEvaluationResult.disabled(
          "no Docker engine found (DOCKER_HOST, /var/run/docker.sock): the SQL Server 2022"
              + " container these tests need cannot start");
    }
    return ConditionEvaluationResult.enabled("integration profile on and a Docker engine found");
  }

  private static synchronized boolean dockerAvailable() {
    if (docker == null) {
      docker = DockerClientFactory.instance().isDockerAvailable();
    }
    return docker;
  }
}
