package org.lakecdc.transforms.delta;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.checkerframework.checker.nullness.qual.Nullable;
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The AWS SDK v2 client settings of one bucket, read from the Hadoop S3A configuration the tables
 * are opened with, so the log store ({@link S3ConditionalLogStore}) reaches the same store with the
 * same identity as S3A does. Per-bucket keys ({@code fs.s3a.bucket.<bucket>.<name>}) win over the
 * global ones ({@code fs.s3a.<name>}), as in S3A:
 *
 * <ul>
 *   <li>{@code fs.s3a.endpoint}: a URL, or a host (then {@code https://} unless {@code
 *       fs.s3a.connection.ssl.enabled=false}); empty or an {@code amazonaws.com} host: AWS's own
 *       endpoint for the region;
 *   <li>{@code fs.s3a.endpoint.region}: the signing region; else the region of an {@code
 *       s3.<region>.amazonaws.com} endpoint, else {@code us-east-1} (with cross-region access to
 *       buckets elsewhere);
 *   <li>{@code fs.s3a.path.style.access}: path-style requests (MinIO, S3Proxy);
 *   <li>{@code fs.s3a.access.key}, {@code fs.s3a.secret.key}, {@code fs.s3a.session.token} (read
 *       with {@link Configuration#getPassword}, so Hadoop credential providers work); without them
 *       anonymous access when {@code fs.s3a.aws.credentials.provider} names S3A's anonymous
 *       provider, else the SDK's default chain (environment, system properties, profile, web
 *       identity, container and instance roles);
 *   <li>{@code fs.s3a.connection.establish.timeout} and {@code fs.s3a.connection.timeout}.
 * </ul>
 *
 * <p>Equal settings share one client per JVM (clients are thread-safe and never closed: a JVM holds
 * as many as it has distinct settings). {@link #describe()} and {@link #toString()} never show a
 * secret.
 */
record S3ClientSettings(
    @Nullable URI endpoint,
    Region region,
    boolean pathStyle,
    @Nullable String accessKey,
    @Nullable String secretKey,
    @Nullable String sessionToken,
    boolean anonymous,
    Duration connectTimeout,
    Duration socketTimeout) {

  private static final Map<S3ClientSettings, S3Client> CLIENTS = new ConcurrentHashMap<>();

  /**
   * The settings of {@code bucket} in {@code conf}.
   *
   * @param conf the Hadoop configuration
   * @param bucket the bucket
   * @return the settings
   * @throws UncheckedIOException when a credential provider of the configuration cannot be read
   */
  static S3ClientSettings of(Configuration conf, String bucket) {
    String endpointText = get(conf, bucket, "endpoint");
    boolean ssl =
        Boolean.parseBoolean(orDefault(get(conf, bucket, "connection.ssl.enabled"), "true"));
    URI endpoint = null;
    String regionFromEndpoint = null;
    if (endpointText != null && !endpointText.isBlank()) {
      String text = endpointText.strip();
      URI uri = URI.create(text.contains("://") ? text : (ssl ? "https://" : "http://") + text);
      String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
      if (host.endsWith(".amazonaws.com")) {
        String[] parts = host.split("\\.");
        // s3.<region>.amazonaws.com or s3-<region>.amazonaws.com
        if (parts.length == 4 && parts[0].equals("s3")) {
          regionFromEndpoint = parts[1];
        } else if (parts.length == 3 && parts[0].startsWith("s3-")) {
          regionFromEndpoint = parts[0].substring(3);
        }
      } else {
        endpoint = uri;
      }
    }
    String region = get(conf, bucket, "endpoint.region");
    if (region == null || region.isBlank()) {
      region = regionFromEndpoint != null ? regionFromEndpoint : "us-east-1";
    }
    String providers = orDefault(get(conf, bucket, "aws.credentials.provider"), "");
    return new S3ClientSettings(
        endpoint,
        Region.of(region.strip()),
        Boolean.parseBoolean(orDefault(get(conf, bucket, "path.style.access"), "false")),
        password(conf, bucket, "access.key"),
        password(conf, bucket, "secret.key"),
        password(conf, bucket, "session.token"),
        providers.contains("AnonymousAWSCredentialsProvider"),
        Duration.ofMillis(timeMillis(conf, bucket, "connection.establish.timeout", 5_000)),
        Duration.ofMillis(timeMillis(conf, bucket, "connection.timeout", 200_000)));
  }

  /** The client of these settings, made on first use. */
  S3Client client() {
    return CLIENTS.computeIfAbsent(this, S3ClientSettings::newClient);
  }

  private static S3Client newClient(S3ClientSettings s) {
    var builder =
        S3Client.builder()
            .region(s.region())
            .forcePathStyle(s.pathStyle())
            .crossRegionAccessEnabled(s.endpoint() == null)
            // Plain PUTs with Content-MD5-free bodies: third-party stores (MinIO, Ceph, S3Proxy)
            // do not all take the SDK's default trailing checksums.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            .credentialsProvider(s.credentials())
            .overrideConfiguration(o -> o.retryStrategy(RetryMode.STANDARD))
            .httpClient(
                Apache5HttpClient.builder()
                    .connectionTimeout(s.connectTimeout())
                    .socketTimeout(s.socketTimeout())
                    .build());
    if (s.endpoint() != null) {
      builder.endpointOverride(s.endpoint());
    }
    return builder.build();
  }

  private AwsCredentialsProvider credentials() {
    if (accessKey != null && secretKey != null) {
      return StaticCredentialsProvider.create(
          sessionToken != null
              ? AwsSessionCredentials.create(accessKey, secretKey, sessionToken)
              : AwsBasicCredentials.create(accessKey, secretKey));
    }
    if (anonymous) {
      return AnonymousCredentialsProvider.create();
    }
    return DefaultCredentialsProvider.builder().build();
  }

  /** The endpoint (or {@code AWS S3 in <region>}), without credentials. */
  String describe() {
    return endpoint != null ? endpoint.toString() : "AWS S3 in " + region.id();
  }

  @Override
  public String toString() {
    return "S3ClientSettings["
        + describe()
        + ", path style "
        + pathStyle
        + ", access key "
        + (accessKey == null ? "(none)" : "****")
        + "]";
  }

  private static @Nullable String get(Configuration conf, String bucket, String name) {
    String perBucket = conf.getTrimmed("fs.s3a.bucket." + bucket + "." + name);
    return perBucket != null ? perBucket : conf.getTrimmed("fs.s3a." + name);
  }

  private static @Nullable String password(Configuration conf, String bucket, String name) {
    try {
      char[] perBucket = conf.getPassword("fs.s3a.bucket." + bucket + "." + name);
      char[] value = perBucket != null ? perBucket : conf.getPassword("fs.s3a." + name);
      return value == null || value.length == 0 ? null : new String(value).strip();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read fs.s3a." + name + " of bucket " + bucket, e);
    }
  }

  private static long timeMillis(Configuration conf, String bucket, String name, long dflt) {
    String perBucket = "fs.s3a.bucket." + bucket + "." + name;
    String key = conf.get(perBucket) != null ? perBucket : "fs.s3a." + name;
    return conf.getTimeDuration(key, dflt, TimeUnit.MILLISECONDS);
  }

  private static String orDefault(@Nullable String value, String dflt) {
    return value == null || value.isBlank() ? dflt : value;
  }
}
