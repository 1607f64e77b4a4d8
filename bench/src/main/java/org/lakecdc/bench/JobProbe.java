package org.lakecdc.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;
import org.lakecdc.pipelines.CdcToDelta;

/**
 * The job JVM's main: runs {@link CdcToDelta#main} (the job's public entry point, which exits the
 * JVM) and, as the JVM shuts down, writes what it measured to a file, one {@code key=value} a line:
 *
 * <ul>
 *   <li>{@code elapsed_ms}: wall time from this main's start to the shutdown (the whole job: its
 *       pipeline construction, every batch, the summary);
 *   <li>{@code heap_after_gc_max_bytes}: the largest heap in use right after a garbage collection
 *       (all heap pools summed, from the collectors' notifications), the measure of the job's live
 *       heap; {@code -1} when no collection ran;
 *   <li>{@code heap_peak_bytes}: the sum of the heap pools' peak usage (garbage included), for
 *       reference;
 *   <li>{@code cpu_ms}: the CPU time of the whole JVM over the same span ({@code
 *       OperatingSystemMXBean.getProcessCpuTime}: every thread, GC and JIT included), so that
 *       {@code cpu_ms / elapsed_ms} tells how many cores the job kept busy whatever else the
 *       machine runs;
 *   <li>{@code gc_ms}: the collectors' accumulated collection time ({@code
 *       GarbageCollectorMXBean.getCollectionTime}, summed), and {@code jit_ms}: the JIT compilers'
 *       ({@code CompilationMXBean.getTotalCompilationTime}), both wall milliseconds of their
 *       threads, -1 when the JVM does not say;
 *   <li>{@code cpu_by_thread}: the CPU seconds of the live threads by name ({@link #cpuByThread}),
 *       to tell the readers' share from the JIT compilers', the collectors' and the rest.
 * </ul>
 *
 * <p>Usage: {@code JobProbe <result file> <CdcToDelta arguments...>}.
 */
public final class JobProbe {
  private JobProbe() {}

  /**
   * Runs the job and records its measures.
   *
   * @param args the result file, then the job's command line
   */
  public static void main(String[] args) {
    if (args.length < 1) {
      throw new IllegalArgumentException("usage: JobProbe <result file> <CdcToDelta arguments...>");
    }
    long start = System.nanoTime();
    Path result = Path.of(args[0]);
    AtomicLong maxAfterGc = new AtomicLong(-1);
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ((NotificationEmitter) gc)
          .addNotificationListener(
              (notification, handback) -> {
                if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
                    notification.getType())) {
                  return;
                }
                GarbageCollectionNotificationInfo info =
                    GarbageCollectionNotificationInfo.from(
                        (CompositeData) notification.getUserData());
                long used = heapUsed(info.getGcInfo().getMemoryUsageAfterGc());
                maxAfterGc.accumulateAndGet(used, Math::max);
              },
              null,
              null);
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  long elapsedMs = (System.nanoTime() - start) / 1_000_000;
                  long peak = 0;
                  for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                    if (pool.getType() == MemoryType.HEAP) {
                      peak += pool.getPeakUsage().getUsed();
                    }
                  }
                  String text =
                      "elapsed_ms="
                          + elapsedMs
                          + "\ncpu_ms="
                          + cpuMs()
                          + "\ngc_ms="
                          + gcMs()
                          + "\njit_ms="
                          + jitMs()
                          + "\ncpu_by_thread="
                          + cpuByThread()
                          + "\nheap_after_gc_max_bytes="
                          + maxAfterGc.get()
                          + "\nheap_peak_bytes="
                          + peak
                          + "\n";
                  try {
                    Files.writeString(result, text, StandardCharsets.UTF_8);
                  } catch (IOException e) {
                    System.err.println("error: cannot write " + result + ": " + e.getMessage());
                  }
                },
                "job-probe"));
    CdcToDelta.main(Arrays.copyOfRange(args, 1, args.length));
  }

  /**
   * The CPU time of the JVM's live threads, JIT compiler and GC threads included, summed by name
   * without a trailing number ({@code C2 CompilerThre}, {@code GC Thread}, {@code direct-runner-w}:
   * the kernel keeps 15 characters of a name), from {@code /proc/self/task/<tid>/stat} (user and
   * system time in clock ticks of 10 ms): {@code name:seconds} for the ten largest,
   * comma-separated, largest first; empty where there is no {@code /proc}. Threads that ended
   * before the JVM's shutdown are not counted.
   */
  static String cpuByThread() {
    java.util.Map<String, Long> ticks = new java.util.HashMap<>();
    try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        String stat;
        try {
          stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
        } catch (IOException e) {
          continue; // the thread ended
        }
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open) {
          continue;
        }
        String name = stat.substring(open + 1, close).replaceAll("#?[0-9]+$", "");
        String[] fields = stat.substring(close + 2).split(" ");
        // After the name: state (field 3), ..., utime (14), stime (15).
        long used = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        ticks.merge(name, used, Long::sum);
      }
    } catch (IOException | RuntimeException e) {
      return "";
    }
    return ticks.entrySet().stream()
        .sorted(java.util.Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(10)
        .map(
            e ->
                e.getKey()
                    + ":"
                    + String.format(java.util.Locale.ROOT, "%.1f", e.getValue() / 100.0))
        .collect(java.util.stream.Collectors.joining(","));
  }

  /** The process's CPU time so far, milliseconds; -1 when the JVM does not measure it. */
  private static long cpuMs() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      long nanos = os.getProcessCpuTime();
      return nanos < 0 ? -1 : nanos / 1_000_000;
    }
    return -1;
  }

  /** The collectors' collection time so far, milliseconds; -1 when none says. */
  private static long gcMs() {
    long sum = -1;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      long t = gc.getCollectionTime();
      if (t >= 0) {
        sum = Math.max(sum, 0) + t;
      }
    }
    return sum;
  }

  /** The JIT compilers' time so far, milliseconds; -1 when the JVM does not measure it. */
  private static long jitMs() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported()
        ? jit.getTotalCompilationTime()
        : -1;
  }

  /** The heap pools' usage summed (non-heap pools such as Metaspace left out). */
  private static long heapUsed(Map<String, MemoryUsage> byPool) {
    long sum = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      MemoryUsage usage = byPool.get(pool.getName());
      if (pool.getType() == MemoryType.HEAP && usage != null) {
        sum += usage.getUsed();
      }
    }
    return sum;
  }
}
