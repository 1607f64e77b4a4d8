package org.lakecdc.locals3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The facts the project relies on about its S3 test server, checked against the server itself with
 * the AWS SDK v2: conditional PUTs ({@code If-None-Match: *}) are answered 412 on an existing key
 * and exactly one of racing writers wins a new key; objects are files under the bucket's directory;
 * a stopped server refuses connections and serves the same objects after a restart; the other file
 * system backend refuses conditional writes with 501.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LocalS3ServerTest {
  @TempDir static Path dir;

  private static LocalS3Server server;
  private static S3Client s3;

  @BeforeAll
  static void startServer() throws Exception {
    server = LocalS3Server.start(dir.resolve("s3"));
    server.createBucket("lake");
    s3 = client(server);
  }

  @AfterAll
  static void stopServer() {
    if (s3 != null) {
      s3.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static S3Client client(LocalS3Server server) {
    return S3Client.builder()
        .endpointOverride(URI.create(server.endpoint()))
        .forcePathStyle(true)
        .region(Region.US_EAST_1)
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .credentialsProvider(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create(LocalS3Server.ACCESS_KEY, LocalS3Server.SECRET_KEY)))
        .httpClient(Apache5HttpClient.builder().build())
        .build();
  }

  private static int putIfAbsent(S3Client client, String key, String body) {
    try {
      client.putObject(
          PutObjectRequest.builder().bucket("lake").key(key).ifNoneMatch("*").build(),
          RequestBody.fromString(body, StandardCharsets.UTF_8));
      return 200;
    } catch (S3Exception e) {
      return e.statusCode();
    }
  }

  @Test
  void aConditionalPutOfAnExistingKeyIsRefusedWith412AndKeepsTheFirstContent() throws Exception {
    assertEquals(200, putIfAbsent(s3, "t/_delta_log/00000000000000000000.json", "first\n"));
    assertEquals(412, putIfAbsent(s3, "t/_delta_log/00000000000000000000.json", "second\n"));
    Path file = server.bucketDirectory("lake").resolve("t/_delta_log/00000000000000000000.json");
    assertEquals("first\n", Files.readString(file));
  }

  @Test
  void ofRacingConditionalPutsOfANewKeyExactlyOneWins() throws Exception {
    int racers = 8;
    int keys = 10;
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    try {
      for (int k = 0; k < keys; k++) {
        String key = "race/_delta_log/" + String.format("%020d", k) + ".json";
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> answers = new ArrayList<>();
        for (int r = 0; r < racers; r++) {
          String body = "racer " + r + "\n";
          answers.add(
              pool.submit(
                  () -> {
                    go.await();
                    return putIfAbsent(s3, key, body);
                  }));
        }
        go.countDown();
        List<Integer> codes = new ArrayList<>();
        for (Future<Integer> answer : answers) {
          codes.add(answer.get());
        }
        assertEquals(1, codes.stream().filter(c -> c == 200).count(), key + ": " + codes);
        assertEquals(racers - 1, codes.stream().filter(c -> c == 412).count(), key + ": " + codes);
        String winner = "racer " + codes.indexOf(200) + "\n";
        assertEquals(winner, Files.readString(server.bucketDirectory("lake").resolve(key)));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aStoppedServerRefusesConnectionsAndARestartedOneServesTheSameObjects() throws Exception {
    assertEquals(200, putIfAbsent(s3, "restart/a.json", "kept\n"));
    server.stop();
    assertFalse(server.isRunning());
    assertThrows(
        software.amazon.awssdk.core.exception.SdkClientException.class,
        () -> s3.getObjectAsBytes(b -> b.bucket("lake").key("restart/a.json")));
    server.restart();
    assertTrue(server.isRunning());
    assertEquals(
        "kept\n", s3.getObjectAsBytes(b -> b.bucket("lake").key("restart/a.json")).asUtf8String());
  }

  @Test
  void aRecordingServerRecordsEachRequestWithItsIfNoneMatchAndItsErrorStatus() throws Exception {
    assertThrows(IllegalStateException.class, server::requests);
    try (LocalS3Server recording = LocalS3Server.startRecordingRequests(dir.resolve("recorded"));
        S3Client client = client(recording)) {
      recording.createBucket("lake");
      String commit = "t/_delta_log/00000000000000000000.json";
      assertEquals(200, putIfAbsent(client, commit, "first\n"));
      assertEquals(412, putIfAbsent(client, commit, "second\n"));
      client.putObject(
          PutObjectRequest.builder().bucket("lake").key("t/_last_checkpoint").build(),
          RequestBody.fromString("{}", StandardCharsets.UTF_8));
      assertEquals(
          List.of(
              new LocalS3Server.Request("PUT", "lake", commit, true, 200),
              new LocalS3Server.Request("PUT", "lake", commit, true, 412),
              new LocalS3Server.Request("PUT", "lake", "t/_last_checkpoint", false, 200)),
          // Less the start's own HEAD of the service (bucket "").
          recording.requests().stream().filter(r -> r.bucket().equals("lake")).toList());
    }
  }
}
