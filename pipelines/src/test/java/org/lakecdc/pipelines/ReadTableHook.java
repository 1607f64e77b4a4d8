package org.lakecdc.pipelines;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.TableQuery;

/**
 * A client factory of the simulator whose clients run a hook once, right before the first {@code
 * readTable} of any of them (a snapshot's read), or of one table only, or before every {@code
 * readTable} of one table: cleanup "during" the read, or reads held until a condition holds; the
 * rows read are counted by thread. Hooks live in this JVM by name, so the factory stays
 * serializable for the DirectRunner, Spark's {@code local[2]} and Flink's mini-cluster.
 */
final class ReadTableHook implements CdcClientFactory {
  private static final long serialVersionUID = 1L;
  private static final Map<String, Runnable> HOOKS = new ConcurrentHashMap<>();
  private static final Map<String, Set<String>> THREADS = new ConcurrentHashMap<>();
  private static final Map<String, Map<String, Long>> ROWS = new ConcurrentHashMap<>();

  /** What a client does instead of its {@code readTable}: {@code read} is the client's own. */
  interface TableRead {
    CloseableIterator<?> read(TableQuery query, TableReadCall read) throws Throwable;
  }

  /** The client's own {@code readTable} of the query. */
  interface TableReadCall {
    CloseableIterator<?> call() throws Throwable;
  }

  private final CdcClientFactory delegate;
  private final @Nullable String table;
  private final boolean everyRead;
  private final String name;

  private ReadTableHook(
      CdcClientFactory delegate, @Nullable String table, boolean everyRead, Runnable hook) {
    this.delegate = delegate;
    this.table = table;
    this.everyRead = everyRead;
    this.name = UUID.randomUUID().toString();
    HOOKS.put(name, hook);
  }

  /** {@code delegate}'s clients, running {@code hook} before the first {@code readTable}. */
  static CdcClientFactory before(CdcClientFactory delegate, Runnable hook) {
    return new ReadTableHook(delegate, null, false, hook);
  }

  /**
   * {@code delegate}'s clients, running {@code hook} before the first {@code readTable} of {@code
   * table} (its name without the schema); other tables' reads go through at once.
   */
  static ReadTableHook beforeReadOf(CdcClientFactory delegate, String table, Runnable hook) {
    return new ReadTableHook(delegate, table, false, hook);
  }

  /**
   * {@code delegate}'s clients, running {@code hook} before every {@code readTable} of {@code
   * table} (each chunk's read of a chunked snapshot); other tables' reads go through at once.
   */
  static ReadTableHook beforeEachReadOf(CdcClientFactory delegate, String table, Runnable hook) {
    return new ReadTableHook(delegate, table, true, hook);
  }

  /** The names of the threads that called {@code readTable} on this factory's clients. */
  Set<String> readingThreads() {
    return Set.copyOf(THREADS.getOrDefault(name, Set.of()));
  }

  /**
   * The rows the clients' {@code readTable} calls returned, by the name of the thread that called
   * {@code readTable}; a thread that read no row is not listed.
   */
  Map<String, Long> rowsByThread() {
    return Map.copyOf(ROWS.getOrDefault(name, Map.of()));
  }

  /** Whether the hook has run (a hook of {@link #beforeEachReadOf}: never true). */
  boolean ran() {
    return !HOOKS.containsKey(name);
  }

  @Override
  public CdcClient open() {
    return intercept(
        delegate.open(),
        (query, read) -> {
          THREADS
              .computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet())
              .add(Thread.currentThread().getName());
          if (table == null || query.table().equalsIgnoreCase(table)) {
            Runnable hook = everyRead ? HOOKS.get(name) : HOOKS.remove(name);
            if (hook != null) {
              hook.run();
            }
          }
          Map<String, Long> counts = ROWS.computeIfAbsent(name, n -> new ConcurrentHashMap<>());
          String thread = Thread.currentThread().getName();
          return watched(read.call(), () -> counts.merge(thread, 1L, Long::sum), () -> {});
        });
  }

  /** {@code rows}, running {@code onRow} after each row is read and {@code onClose} once closed. */
  static CloseableIterator<Object> watched(
      CloseableIterator<?> rows, Runnable onRow, Runnable onClose) {
    return new CloseableIterator<Object>() {
      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public Object next() {
        Object row = rows.next();
        onRow.run();
        return row;
      }

      @Override
      public void close() {
        rows.close();
        onClose.run();
      }
    };
  }

  /**
   * {@code client} with its {@code readTable} calls going through {@code onRead}; every other call
   * goes to {@code client} as it is.
   */
  static CdcClient intercept(CdcClient client, TableRead onRead) {
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, args) ->
                method.getName().equals("readTable")
                    ? onRead.read(
                        (TableQuery) args[0],
                        () -> (CloseableIterator<?>) invoke(method, client, args))
                    : invoke(method, client, args));
  }

  private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
