package org.lakecdc.pipelines.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.S3StoreCheck;

/**
 * The one check every job makes of the object stores its tables live on, after its options are
 * parsed and before it opens any table: for the {@code s3a://} tables among the ones it reads or
 * writes, that the endpoint answers, takes the credentials, has the bucket, and honours the
 * conditional writes the default log store needs ({@link S3StoreCheck}). A failure is a refused
 * option: one line naming the setting and what to do, exit code {@link JobExit#BAD_OPTION}, nothing
 * written. Tables of other schemes (local paths, HDFS) are not looked at.
 */
public final class ObjectStores {
  private ObjectStores() {}

  /**
   * Checks the stores of {@code tablePaths} under {@code conf}, one set of requests per bucket.
   *
   * @param conf the job's Hadoop configuration ({@code --hadoopConf}, {@code --hadoopConfFile})
   * @param tablePaths the normalized paths or URIs of the tables the job reads or writes; nulls (a
   *     table the run has not) are skipped
   * @throws S3StoreCheck.SettingException (an {@link IllegalArgumentException}) {@code the S3
   *     endpoint <endpoint> (fs.s3a.endpoint) cannot be reached ...}, {@code S3 at <endpoint>
   *     refused the credentials for bucket <bucket> ...}, {@code bucket <bucket> does not exist at
   *     <endpoint> ...}, or that the store does not support conditional writes
   */
  public static void check(HadoopConf conf, @Nullable String... tablePaths) {
    check(conf, Arrays.asList(tablePaths));
  }

  /**
   * {@link #check(HadoopConf, String...)} of a list of tables.
   *
   * @throws S3StoreCheck.SettingException naming the setting and what to do
   */
  public static void check(HadoopConf conf, List<? extends @Nullable String> tablePaths) {
    S3StoreCheck.check(conf, new ArrayList<@Nullable String>(tablePaths));
  }
}
