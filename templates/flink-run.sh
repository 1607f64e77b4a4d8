#!/usr/bin/env bash
# Submits the main job CdcToDelta to a Flink 1.19 cluster with the bundled jar of flink-jar/.
#
#   mvn -B -pl flink-jar -am -DskipTests package     # builds the jar once
#   FLINK_HOME=/opt/flink templates/flink-run.sh templates/options/dbo_orders.options [--opt=v ...]
#
# Environment (all optional but FLINK_HOME):
#   FLINK_HOME       the Flink 1.19 installation whose bin/flink is used (its conf/ names the cluster)
#   FLINK_RUN_ARGS   more `flink run` arguments (-m host:8081, -t yarn-per-job, -p 4, -d, ...)
#   LAKECDC_JAR      the jar (default flink-jar/target/lakecdc-flink-<version>.jar)
# docs/runners.md explains each setting and what to change for a real cluster.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/options.sh"
[[ $# -ge 1 ]] || { usage "$0"; exit 2; }
read_options "$@"
shift
jar="${LAKECDC_JAR:-$(ls "$here"/../flink-jar/target/lakecdc-flink-*.jar 2>/dev/null | grep -v -e original- -e sources | head -1 || true)}"
[[ -f "$jar" ]] || { echo "error: no Flink jar; build it: mvn -B -pl flink-jar -am -DskipTests package" >&2; exit 2; }
# shellcheck disable=SC2086
exec "${FLINK_HOME:?set FLINK_HOME to the Flink 1.19 installation}/bin/flink" run \
  ${FLINK_RUN_ARGS:-} \
  -c org.lakecdc.pipelines.CdcToDelta \
  "$jar" \
  --runner=FlinkRunner "${JOB_OPTIONS[@]}" "$@"
