package org.lakecdc.transforms.delta;

import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.checkerframework.checker.nullness.qual.Nullable;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * A launcher's check of the S3 settings of its {@code s3a://} tables before anything is written:
 * for each bucket, that the endpoint answers, that it takes the credentials, that the bucket
 * exists, and, when the tables commit through {@link S3ConditionalLogStore} (the default), that the
 * store honours conditional writes (a probe object written twice and deleted). A failure is one
 * line naming the setting and what to do ({@link SettingException}), which the jobs report as a
 * refused option (exit code 2). Paths of other schemes are not looked at.
 */
public final class S3StoreCheck {
  private S3StoreCheck() {}

  /** A setting that keeps the job from its S3 tables: the message says which and what to do. */
  public static final class SettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    SettingException(String message, @Nullable Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Checks the buckets of the {@code s3a://} paths among {@code tablePaths} (nulls skipped), one
   * request set per bucket.
   *
   * @param conf the job's Hadoop configuration
   * @param tablePaths the table paths or URIs the job will open
   * @throws SettingException {@code the S3 endpoint <endpoint> (fs.s3a.endpoint) cannot be reached
   *     ...}, {@code S3 at <endpoint> refused the credentials for bucket <bucket> ...}, {@code
   *     bucket <bucket> does not exist at <endpoint> ...}, or the store does not support
   *     conditional writes ({@link ConditionalWritesUnsupportedException}'s message)
   */
  public static void check(HadoopConf conf, Collection<@Nullable String> tablePaths) {
    Map<String, String> firstPathByBucket = new LinkedHashMap<>();
    for (String path : tablePaths) {
      if (path == null) {
        continue;
      }
      URI uri;
      try {
        uri = new org.apache.hadoop.fs.Path(path).toUri();
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (uri.getScheme() != null
          && uri.getScheme().toLowerCase(Locale.ROOT).equals("s3a")
          && uri.getHost() != null) {
        firstPathByBucket.putIfAbsent(uri.getHost(), path);
      }
    }
    if (firstPathByBucket.isEmpty() || !onClassPath()) {
      // Without the connector the run fails on its first table with the one line naming it.
      return;
    }
    Configuration hadoop = new Configuration();
    conf.entries().forEach(hadoop::set);
    String logStore = hadoop.get(S3ConditionalLogStore.CONF_KEY);
    boolean conditional =
        logStore == null || logStore.equals(S3ConditionalLogStore.class.getName());
    firstPathByBucket.forEach(
        (bucket, path) -> Probe.checkBucket(hadoop, bucket, path, conditional));
  }

  /** Whether S3A and the AWS SDK v2 of the log store are on the class path. */
  private static boolean onClassPath() {
    ClassLoader loader = S3StoreCheck.class.getClassLoader();
    try {
      Class.forName("org.apache.hadoop.fs.s3a.S3AFileSystem", false, loader);
      Class.forName("software.amazon.awssdk.services.s3.S3Client", false, loader);
      Class.forName("software.amazon.awssdk.http.apache5.Apache5HttpClient", false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * The requests, in a class of their own: it names the AWS SDK's types, which the JVM resolves
   * when it loads the class, so it is loaded only once the SDK is known to be there.
   */
  private static final class Probe {
    private Probe() {}

    private static void checkBucket(
        Configuration hadoop, String bucket, String path, boolean conditional) {
      S3ClientSettings settings;
      try {
        settings = S3ClientSettings.of(hadoop, bucket);
      } catch (RuntimeException e) {
        throw new SettingException(
            "the S3 settings of bucket " + bucket + " cannot be read: " + e.getMessage(), e);
      }
      S3Client client = settings.client();
      String endpoint = settings.describe();
      try {
        client.headBucket(b -> b.bucket(bucket));
      } catch (SdkClientException e) {
        throw unreachable(endpoint, bucket, e);
      } catch (S3Exception e) {
        throw refused(endpoint, bucket, e);
      }
      if (!conditional) {
        return;
      }
      String key = S3ConditionalLogStore.key(new org.apache.hadoop.fs.Path(path));
      String logKey =
          (key.endsWith("/") ? key : key + "/") + "_delta_log/00000000000000000000.json";
      try {
        S3ConditionalLogStore.requireConditionalWrites(settings, client, bucket, logKey);
      } catch (ConditionalWritesUnsupportedException e) {
        throw new SettingException(e.getMessage(), e);
      } catch (IOException e) {
        throw new SettingException(
            "S3 at "
                + endpoint
                + " refused a write to bucket "
                + bucket
                + " ("
                + e.getMessage()
                + "): the job's credentials need PutObject, GetObject, DeleteObject and ListBucket"
                + " on the tables' prefixes",
            e);
      } catch (java.io.UncheckedIOException e) {
        throw unreachable(endpoint, bucket, e);
      }
    }

    private static SettingException unreachable(String endpoint, String bucket, Exception e) {
      return new SettingException(
          "the S3 endpoint "
              + endpoint
              + " (fs.s3a.endpoint) cannot be reached for bucket "
              + bucket
              + " ("
              + firstLine(e)
              + "): set fs.s3a.endpoint to the store's address (http://host:port for MinIO or"
              + " another server; unset for AWS S3, with fs.s3a.endpoint.region)",
          e);
    }

    private static SettingException refused(String endpoint, String bucket, S3Exception e) {
      int status = e.statusCode();
      if (status == 404) {
        return new SettingException(
            "bucket "
                + bucket
                + " does not exist at "
                + endpoint
                + ": create it, or correct the bucket of the s3a:// table paths",
            e);
      }
      if (status == 403 || status == 400 && isCredentialError(e)) {
        return new SettingException(
            "S3 at "
                + endpoint
                + " refused the credentials for bucket "
                + bucket
                + " ("
                + status
                + "): check fs.s3a.access.key and fs.s3a.secret.key (or"
                + " fs.s3a.aws.credentials.provider), and that they may read and write the bucket",
            e);
      }
      if (status == 301) {
        return new SettingException(
            "bucket "
                + bucket
                + " is in another region than "
                + endpoint
                + " (301): set fs.s3a.endpoint.region to the bucket's region",
            e);
      }
      return new SettingException(
          "S3 at "
              + endpoint
              + " answered "
              + status
              + " for bucket "
              + bucket
              + ": "
              + firstLine(e),
          e);
    }

    private static boolean isCredentialError(S3Exception e) {
      String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
      return code != null && (code.contains("Signature") || code.contains("AccessKey"));
    }

    private static String firstLine(Exception e) {
      String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      return message.lines().findFirst().orElse(message);
    }
  }
}
