package org.lakecdc.pipelines.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WaitingNoticeTest {
  @Test
  void saysItIsWaitingOnlyWhenThePositionStayedForAWholeInterval() {
    Deque<Optional<String>> positions =
        new ArrayDeque<>(
            List.of(
                Optional.empty(),
                Optional.empty(),
                Optional.of("0x0000002A000001000031 (batch 0)"),
                Optional.of("0x0000002A000001000031 (batch 0)"),
                Optional.of("0x0000002A000001000071 (batch 1)"),
                Optional.of("0x0000002A000001000071 (batch 1)"),
                Optional.of("0x0000002A000001000071 (batch 1)")));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      ContinuousMode.WaitingNotice notice =
          new ContinuousMode.WaitingNotice(
              Duration.ofSeconds(5),
              () ->
                  positions
                      .removeFirst()
                      .map(p -> new ContinuousMode.WaitingNotice.Waiting("dbo_orders", p)),
              out);
      for (int check = 0; check < 7; check++) {
        notice.check();
      }
    }
    String waiting =
        "Waiting for changes to dbo_orders: no batch committed in the last minute; position %s;"
            + " polling every 5 s";
    assertEquals(
        List.of(
            String.format(waiting, "0x0000002A000001000031 (batch 0)"),
            String.format(waiting, "0x0000002A000001000071 (batch 1)"),
            String.format(waiting, "0x0000002A000001000071 (batch 1)")),
        bytes.toString(StandardCharsets.UTF_8).lines().toList());
  }
}
