#!/usr/bin/env bash
# Submits the main job CdcToDelta to Spark with the bundled jar of spark-jar/.
#
#   mvn -B -pl spark-jar -am -DskipTests package     # builds the jar once
#   SPARK_HOME=/opt/spark templates/spark-submit.sh templates/options/dbo_orders.options [--opt=v ...]
#
# Environment (all optional but SPARK_HOME):
#   SPARK_HOME         the Spark 3.5 (Scala 2.12) installation whose bin/spark-submit is used
#   SPARK_MASTER       --master (default local[*]; yarn, spark://host:7077, k8s://... on a cluster)
#   SPARK_DEPLOY_MODE  --deploy-mode (default client: the driver runs here)
#   SPARK_SUBMIT_ARGS  more spark-submit arguments (--conf, --num-executors, --files, ...)
#   LAKECDC_JAR        the jar (default spark-jar/target/lakecdc-spark-<version>.jar)
# docs/runners.md explains each setting and what to change for a real cluster.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/options.sh"
[[ $# -ge 1 ]] || { usage "$0"; exit 2; }
read_options "$@"
shift
jar="${LAKECDC_JAR:-$(ls "$here"/../spark-jar/target/lakecdc-spark-*.jar 2>/dev/null | head -1 || true)}"
[[ -f "$jar" ]] || { echo "error: no Spark jar; build it: mvn -B -pl spark-jar -am -DskipTests package" >&2; exit 2; }
# shellcheck disable=SC2086
exec "${SPARK_HOME:?set SPARK_HOME to the Spark 3.5 installation}/bin/spark-submit" \
  --master "${SPARK_MASTER:-local[*]}" \
  --deploy-mode "${SPARK_DEPLOY_MODE:-client}" \
  --class org.lakecdc.pipelines.CdcToDelta \
  ${SPARK_SUBMIT_ARGS:-} \
  "$jar" \
  --runner=SparkRunner "${JOB_OPTIONS[@]}" "$@"
