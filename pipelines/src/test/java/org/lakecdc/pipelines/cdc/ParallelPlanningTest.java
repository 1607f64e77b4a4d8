package org.lakecdc.pipelines.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ParallelPlanningTest {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private String printed() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void tablesPlannedAtOnceStillPrintTheirLinesInTheTablesOrder() throws Exception {
    CountDownLatch lastDone = new CountDownLatch(1);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    List<ParallelPlanning.Outcome<String>> outcomes =
        ParallelPlanning.run(
            List.of(0, 1, 2, 3, 4, 5),
            3,
            (item, own) -> {
              mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
              try {
                own.println("planning t" + item);
                if (item == 0) {
                  // The first table finishes last: its lines must still come first.
                  assertTrue(lastDone.await(60, TimeUnit.SECONDS), "t5 was planned meanwhile");
                }
                own.println("planned t" + item);
                if (item == 5) {
                  lastDone.countDown();
                }
                return "plan of t" + item;
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              } finally {
                running.decrementAndGet();
              }
            },
            out);
    assertEquals(
        List.of("plan of t0", "plan of t1", "plan of t2", "plan of t3", "plan of t4", "plan of t5"),
        outcomes.stream().map(ParallelPlanning.Outcome::result).toList());
    assertEquals(
        "planning t0\nplanned t0\nplanning t1\nplanned t1\nplanning t2\nplanned t2\n"
            + "planning t3\nplanned t3\nplanning t4\nplanned t4\nplanning t5\nplanned t5\n",
        printed().replace(System.lineSeparator(), "\n"));
    assertTrue(mostAtOnce.get() >= 2 && mostAtOnce.get() <= 3, "at once: " + mostAtOnce.get());
  }

  @Test
  void aFailureEndsTheOutcomesAndOneThreadStartsNothingAfterIt() {
    AtomicInteger calls = new AtomicInteger();
    List<ParallelPlanning.Outcome<String>> outcomes =
        ParallelPlanning.run(
            List.of(0, 1, 2, 3, 4),
            1,
            (item, own) -> {
              calls.incrementAndGet();
              own.println("planning t" + item);
              if (item == 2) {
                throw new IllegalStateException("t2 cannot be planned");
              }
              return "plan of t" + item;
            },
            out);
    assertEquals(3, outcomes.size());
    assertEquals(3, calls.get());
    assertEquals("plan of t1", outcomes.get(1).result());
    assertNull(outcomes.get(2).result());
    assertEquals("t2 cannot be planned", outcomes.get(2).failure().getMessage());
    assertEquals(
        "planning t0\nplanning t1\nplanning t2\n", printed().replace(System.lineSeparator(), "\n"));
  }

  @Test
  void aFailureAmongThreadsPrintsTheLinesUpToItsTableOnly() {
    List<ParallelPlanning.Outcome<String>> outcomes =
        ParallelPlanning.run(
            List.of(0, 1, 2, 3, 4),
            2,
            (item, own) -> {
              own.println("planning t" + item);
              if (item == 1) {
                throw new IllegalArgumentException("t1 is refused");
              }
              return "plan of t" + item;
            },
            out);
    assertEquals(2, outcomes.size());
    assertEquals("plan of t0", outcomes.get(0).result());
    assertEquals("t1 is refused", outcomes.get(1).failure().getMessage());
    assertEquals("planning t0\nplanning t1\n", printed().replace(System.lineSeparator(), "\n"));
  }

  @Test
  void threadsAreOnePerTableUpToTheBound() {
    assertEquals(1, ParallelPlanning.threads(1));
    assertEquals(
        Math.min(2, 2 * Runtime.getRuntime().availableProcessors()), ParallelPlanning.threads(2));
    assertEquals(
        Math.min(ParallelPlanning.MAX_THREADS, 2 * Runtime.getRuntime().availableProcessors()),
        ParallelPlanning.threads(50));
  }
}
