package org.lakecdc.pipelines.options;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of the commands that read the project's tables without Spark ({@code Status}, {@link
 * Show}): how to reach the tables (the Hadoop configuration, as the main job takes it) and the
 * output form. The same names, types and defaults as {@link CdcToDeltaOptions}: Beam requires that
 * of every options interface with the property.
 */
public interface TableReadOptions extends OutputOptions {
  @Description(
      "Hadoop configuration entries key=value for the Delta tables read (object store endpoints and"
          + " credentials, e.g. fs.s3a.endpoint=http://minio:9000); repeat the option or separate"
          + " entries with commas; set over --hadoopConfFile.")
  @Accepts("key=value entries such as fs.s3a.endpoint=http://minio:9000")
  @JsonIgnore
  List<String> getHadoopConf();

  void setHadoopConf(List<String> value);

  @Description(
      "A Hadoop configuration file (core-site.xml form) for the Delta tables read; --hadoopConf"
          + " entries are set over it.")
  @Accepts("the path of a readable Hadoop configuration file (core-site.xml form)")
  String getHadoopConfFile();

  void setHadoopConfFile(String value);

  @Description(
      "Print JSON instead of text: status prints one JSON document, show one JSON object per row"
          + " (JSON Lines).")
  @Default.Boolean(false)
  boolean getJson();

  void setJson(boolean value);

  @Description(
      "Write the output to this file (created or replaced, UTF-8) instead of standard output:"
          + " for machines reading --json when standard output also carries a launcher's lines"
          + " (mvn exec:java prints an escape sequence before the first line).")
  String getOutput();

  void setOutput(String value);
}
