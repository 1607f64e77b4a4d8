package org.lakecdc.transforms.delta;

import io.delta.storage.HadoopFileSystemLogStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The Delta log store of this project's tables on S3 ({@code s3a:} paths): it writes each commit
 * file with a conditional PUT ({@code If-None-Match: *}), so a version another writer took fails
 * with {@link FileAlreadyExistsException} decided by the store itself, across JVMs and machines,
 * without a lock service. Delta's default for {@code s3a} ({@code
 * io.delta.storage.S3SingleDriverLogStore}) checks for the file and then PUTs it, excluding
 * concurrent writers only inside one JVM: two jobs (or two workers of one job) writing version N of
 * a shared table both succeed there, and one commit silently disappears.
 *
 * <p>Reading and listing are Delta's own, through Hadoop's S3A file system ({@link
 * HadoopFileSystemLogStore}); only log files are written with the AWS SDK v2 (S3A 3.3.4 cannot make
 * a conditional PUT), to the endpoint, region, path style and credentials of the S3A configuration
 * ({@link S3ClientSettings}). Files Delta writes with {@code overwrite} (the {@code
 * _last_checkpoint} pointer) are plain PUTs.
 *
 * <p>A conditional PUT answered 412 is compared with what is there: identical bytes are this
 * writer's own earlier attempt whose answer was lost (a retried request), which succeeded; anything
 * else is another writer's commit. Before its first commit to a bucket a JVM checks once that the
 * store honours conditional writes (a PUT of a new probe key, then the same PUT again, which must
 * be refused; the probe is deleted): a store that refuses them (501, 400) or ignores them fails
 * every write with {@link ConditionalWritesUnsupportedException}, naming the setting to change,
 * instead of committing unsafely. A PUT that cannot reach the store fails with an {@link
 * UncheckedIOException} (Delta Kernel then gives up the attempt at once, and the caller retries it
 * from a fresh snapshot with backoff, {@link KernelRetries}).
 *
 * <p>{@link DeltaTables} selects it for {@code s3a} unless the Hadoop configuration names another
 * log store for that scheme ({@value #CONF_KEY}).
 */
public final class S3ConditionalLogStore extends HadoopFileSystemLogStore {
  private static final Logger LOG = LoggerFactory.getLogger(S3ConditionalLogStore.class);

  /** The Hadoop configuration key through which Delta Kernel picks the {@code s3a:} log store. */
  public static final String CONF_KEY = "io.delta.kernel.logStore.s3a.impl";

  /** Where the store was checked: settings and bucket, once per JVM. */
  private static final Map<String, Boolean> CHECKED = new ConcurrentHashMap<>();

  /**
   * Delta Kernel's constructor form (it instantiates a log store by reflection for every call, so
   * the S3 clients are kept per configuration, not per instance).
   *
   * @param initHadoopConf the Hadoop configuration of the engine
   */
  public S3ConditionalLogStore(Configuration initHadoopConf) {
    super(initHadoopConf);
  }

  /**
   * Writes {@code actions}, one a line, each followed by a newline, to {@code path} in one PUT:
   * conditional unless {@code overwrite}.
   *
   * @param path the log file, e.g. {@code s3a://bucket/t/_delta_log/00000000000000000003.json}
   * @param actions the lines (JSON actions)
   * @param overwrite whether an existing object is replaced ({@code _last_checkpoint})
   * @param hadoopConf the S3A configuration
   * @throws FileAlreadyExistsException when {@code overwrite} is false and another writer's object
   *     is at the key
   * @throws ConditionalWritesUnsupportedException when the store does not honour conditional writes
   * @throws IOException when the store refuses the request (access denied, no such bucket)
   * @throws UncheckedIOException when the store cannot be reached, or answered a server error
   */
  @Override
  public void write(
      Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    String bucket = bucket(path);
    String key = key(path);
    byte[] body = lines(actions);
    S3ClientSettings settings = S3ClientSettings.of(hadoopConf, bucket);
    S3Client client = settings.client();
    if (Boolean.TRUE.equals(overwrite)) {
      put(settings, client, bucket, key, body, false, path);
      return;
    }
    requireConditionalWrites(settings, client, bucket, key);
    if (!put(settings, client, bucket, key, body, true, path)) {
      byte[] existing = get(settings, client, bucket, key, path);
      if (Arrays.equals(existing, body)) {
        LOG.info("{} was already written by this commit (a retried request); kept", path);
        return;
      }
      throw new FileAlreadyExistsException(path.toString());
    }
  }

  /**
   * Whether a reader can see a partly written object: no, a PUT is visible whole or not at all, so
   * Delta Kernel writes checkpoints in place.
   *
   * @param path the file
   * @param hadoopConf the configuration
   * @return false
   */
  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
    return false;
  }

  /**
   * Checks once per JVM, settings and bucket that the store answers a conditional PUT of an
   * existing key with 412: two PUTs of one new probe key next to the log file, then its deletion.
   *
   * @throws ConditionalWritesUnsupportedException when the second PUT succeeds too, or the first is
   *     refused as not implemented
   */
  static void requireConditionalWrites(
      S3ClientSettings settings, S3Client client, String bucket, String logKey) throws IOException {
    String where = settings.describe() + " " + bucket;
    if (CHECKED.containsKey(where)) {
      return;
    }
    int slash = logKey.lastIndexOf('/');
    String probe =
        (slash < 0 ? "" : logKey.substring(0, slash + 1))
            + ".lakecdc-conditional-write-check-"
            + UUID.randomUUID();
    Path probePath = new Path("s3a://" + bucket + "/" + probe);
    byte[] content = "lakecdc conditional write check\n".getBytes(StandardCharsets.UTF_8);
    try {
      if (!put(settings, client, bucket, probe, content, true, probePath)) {
        throw new ConditionalWritesUnsupportedException(
            settings, bucket, "a conditional PUT of a new key was answered 412");
      }
      if (put(settings, client, bucket, probe, content, true, probePath)) {
        throw new ConditionalWritesUnsupportedException(
            settings,
            bucket,
            "a conditional PUT (If-None-Match: *) of an existing key succeeded: the store ignores"
                + " the condition");
      }
    } finally {
      try {
        client.deleteObject(b -> b.bucket(bucket).key(probe));
      } catch (RuntimeException e) {
        LOG.warn("Could not delete the probe object s3a://{}/{}: {}", bucket, probe, e.toString());
      }
    }
    CHECKED.put(where, Boolean.TRUE);
  }

  /**
   * One PUT; with {@code ifAbsent} conditional.
   *
   * @return true when written, false when a conditional PUT found the key taken (412)
   */
  private static boolean put(
      S3ClientSettings settings,
      S3Client client,
      String bucket,
      String key,
      byte[] body,
      boolean ifAbsent,
      Path path)
      throws IOException {
    PutObjectRequest.Builder request = PutObjectRequest.builder().bucket(bucket).key(key);
    if (ifAbsent) {
      request.ifNoneMatch("*");
    }
    // 409 ConditionalRequestConflict: a conditional write of the same key was in flight; S3 asks
    // for a retry, whose answer is then 200 or 412.
    for (int attempt = 1; ; attempt++) {
      try {
        client.putObject(request.build(), RequestBody.fromBytes(body));
        return true;
      } catch (S3Exception e) {
        if (ifAbsent && e.statusCode() == 412) {
          return false;
        }
        if (ifAbsent && e.statusCode() == 409 && attempt < 10) {
          pause(attempt);
          continue;
        }
        if (ifAbsent && notImplemented(e)) {
          throw new ConditionalWritesUnsupportedException(
              settings,
              bucket,
              "a conditional PUT (If-None-Match: *) was refused: "
                  + e.statusCode()
                  + " "
                  + errorCode(e));
        }
        throw failure("PUT", path, e);
      } catch (SdkClientException e) {
        throw unreachable("PUT", path, e);
      }
    }
  }

  private static byte[] get(
      S3ClientSettings settings, S3Client client, String bucket, String key, Path path)
      throws IOException {
    try {
      return client.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
    } catch (S3Exception e) {
      throw failure("GET", path, e);
    } catch (SdkClientException e) {
      throw unreachable("GET", path, e);
    }
  }

  private static boolean notImplemented(S3Exception e) {
    String code = errorCode(e);
    return e.statusCode() == 501
        || code.equals("NotImplemented")
        || (e.statusCode() == 400 && code.equals("InvalidArgument"));
  }

  private static String errorCode(S3Exception e) {
    return e.awsErrorDetails() == null || e.awsErrorDetails().errorCode() == null
        ? ""
        : e.awsErrorDetails().errorCode();
  }

  /**
   * A refusal of the store (4xx) as an {@link IOException} for Kernel; a server error (5xx, which
   * the SDK has already retried) as unchecked, like an unreachable store.
   */
  private static IOException failure(String what, Path path, S3Exception e) {
    String message =
        what
            + " "
            + path
            + " failed: "
            + e.statusCode()
            + " "
            + errorCode(e)
            + (e.awsErrorDetails() == null ? "" : " " + e.awsErrorDetails().errorMessage());
    if (e.statusCode() >= 500) {
      throw new UncheckedIOException(new IOException(message, e));
    }
    if (e.statusCode() == 403) {
      return new java.nio.file.AccessDeniedException(path.toString(), null, message);
    }
    return new IOException(message, e);
  }

  private static UncheckedIOException unreachable(String what, Path path, SdkClientException e) {
    return new UncheckedIOException(
        new IOException(what + " " + path + " failed: " + e.getMessage(), e));
  }

  private static void pause(int attempt) {
    try {
      Thread.sleep(Math.min(1000L, 50L << Math.min(attempt, 5)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UncheckedIOException(new java.io.InterruptedIOException("Interrupted"));
    }
  }

  private static byte[] lines(Iterator<String> actions) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (actions.hasNext()) {
      out.writeBytes(actions.next().getBytes(StandardCharsets.UTF_8));
      out.write('\n');
    }
    return out.toByteArray();
  }

  static String bucket(Path path) {
    String bucket = path.toUri().getHost();
    if (bucket == null || bucket.isEmpty()) {
      throw new IllegalArgumentException("No bucket in " + path);
    }
    return bucket;
  }

  static String key(Path path) {
    String key = path.toUri().getPath();
    return key.startsWith("/") ? key.substring(1) : key;
  }
}
