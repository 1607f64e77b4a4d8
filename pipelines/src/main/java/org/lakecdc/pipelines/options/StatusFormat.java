package org.lakecdc.pipelines.options;

/**
 * What {@code Status} prints ({@code --format}); on the command line in any case ({@code text},
 * {@code json}, {@code prometheus}).
 */
public enum StatusFormat {
  /** Lines for a person. */
  TEXT,
  /** One JSON document (as {@code --json}). */
  JSON,
  /** Prometheus' text exposition format, for a node exporter's textfile collector. */
  PROMETHEUS
}
