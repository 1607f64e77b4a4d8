package org.lakecdc.transforms.delta;

import io.delta.storage.CloseableIterator;
import io.delta.storage.LogStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * {@link S3ConditionalLogStore} with faults a test arms: a listing that misses files (as an object
 * store's listing can, right after they were written), and actions run around a write (stopping the
 * S3 server). Each armed fault fires once. Named by {@code io.delta.kernel.logStore.s3a.impl};
 * Kernel makes an instance per call, so the faults are static: one test at a time.
 */
public final class FaultyLogStore extends LogStore {
  /** A listing fault: which file names the next listing leaves out. */
  private static final ConcurrentLinkedQueue<Predicate<String>> HIDDEN =
      new ConcurrentLinkedQueue<>();

  /** Write faults: run before (and instead of nothing after) the write of a matching file. */
  private static final ConcurrentLinkedQueue<WriteFault> WRITES = new ConcurrentLinkedQueue<>();

  /** How many armed faults fired. */
  static final AtomicInteger FIRED = new AtomicInteger();

  /** What a write fault does around the write of a file whose name it matches. */
  interface WriteFault {
    boolean matches(String fileName);

    /** Before the write. */
    default void before() throws IOException {}

    /** After the write succeeded or failed ({@code failure} null when it succeeded). */
    default void after(Throwable failure) throws IOException {}
  }

  private final S3ConditionalLogStore delegate;

  public FaultyLogStore(Configuration conf) {
    super(conf);
    this.delegate = new S3ConditionalLogStore(conf);
  }

  /**
   * The next listing that holds a file whose name matches leaves out all such files; faults armed
   * one after the other fire in turn.
   */
  static void hideFromNextListing(Predicate<String> fileName) {
    HIDDEN.add(fileName);
  }

  /** The next write of a matching file runs {@code fault} around it. */
  static void aroundNextWrite(WriteFault fault) {
    WRITES.add(fault);
  }

  /** Forgets the faults not fired yet; resets the count. */
  static void reset() {
    HIDDEN.clear();
    WRITES.clear();
    FIRED.set(0);
  }

  @Override
  public CloseableIterator<String> read(Path path, Configuration hadoopConf) throws IOException {
    return delegate.read(path, hadoopConf);
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
      throws IOException {
    WriteFault fault = null;
    for (WriteFault f : WRITES) {
      if (f.matches(path.getName()) && WRITES.remove(f)) {
        fault = f;
        FIRED.incrementAndGet();
        break;
      }
    }
    if (fault == null) {
      delegate.write(path, actions, overwrite, conf);
      return;
    }
    fault.before();
    try {
      delegate.write(path, actions, overwrite, conf);
    } catch (IOException | RuntimeException e) {
      fault.after(e);
      throw e;
    }
    fault.after(null);
  }

  @Override
  public Iterator<FileStatus> listFrom(Path path, Configuration hadoopConf) throws IOException {
    List<FileStatus> listed = new ArrayList<>();
    delegate.listFrom(path, hadoopConf).forEachRemaining(listed::add);
    Predicate<String> hidden = HIDDEN.peek();
    // A fault fires on the first listing that holds a file it hides.
    if (hidden == null
        || listed.stream().noneMatch(f -> hidden.test(f.getPath().getName()))
        || !HIDDEN.remove(hidden)) {
      return listed.iterator();
    }
    FIRED.incrementAndGet();
    List<FileStatus> shown = new ArrayList<>();
    for (FileStatus f : listed) {
      if (!hidden.test(f.getPath().getName())) {
        shown.add(f);
      }
    }
    return shown.iterator();
  }

  @Override
  public Path resolvePathOnPhysicalStorage(Path path, Configuration hadoopConf) throws IOException {
    return delegate.resolvePathOnPhysicalStorage(path, hadoopConf);
  }

  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) throws IOException {
    return delegate.isPartialWriteVisible(path, hadoopConf);
  }
}
