package org.lakecdc.pipelines.options;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * How a command reaches its Delta tables' storage (object store endpoints and credentials), shared
 * by every command that opens a Delta table: {@code CdcToDelta}, {@code Backfill}, {@code
 * ApplyChanges}, {@code Reconcile}, {@code Status} and {@code Show}.
 */
public interface HadoopConfOptions extends PipelineOptions {
  @Description(
      "Hadoop configuration entries key=value for every Delta table the job opens, on the"
          + " launcher and on every worker (object store endpoints and credentials, e.g."
          + " fs.s3a.endpoint=http://minio:9000); repeat the option or separate entries with"
          + " commas; set over --hadoopConfFile. Values of keys holding secret, password, key,"
          + " token or credential are never printed.")
  @Accepts("key=value entries such as fs.s3a.endpoint=http://minio:9000")
  // Not serialized with the options, so never shown in a runner's UI or display data.
  @JsonIgnore
  List<String> getHadoopConf();

  void setHadoopConf(List<String> value);

  @Description(
      "A Hadoop configuration file (core-site.xml form), read on the launcher: its properties"
          + " reach every Delta table the job opens, on every worker; --hadoopConf entries are set"
          + " over it.")
  @Accepts("the path of a readable Hadoop configuration file (core-site.xml form)")
  String getHadoopConfFile();

  void setHadoopConfFile(String value);
}
