package org.lakecdc.pipelines;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.TableQuery;

/**
 * A client factory of the simulator whose first {@code readTable} of one table (a snapshot chunk's
 * SELECT) runs a hook first: a read held until a condition holds. Other tables' reads, and the
 * table's later reads, go through at once. Hooks live in this JVM by name, so the factory stays
 * serializable.
 */
final class HeldTableRead implements CdcClientFactory {
  private static final long serialVersionUID = 1L;
  private static final Map<String, Runnable> HOOKS = new ConcurrentHashMap<>();

  private final CdcClientFactory delegate;
  private final String table;
  private final String name;

  /** {@code delegate}'s clients, running {@code hook} before the first read of {@code table}. */
  HeldTableRead(CdcClientFactory delegate, String table, Runnable hook) {
    this.delegate = delegate;
    this.table = table;
    this.name = UUID.randomUUID().toString();
    HOOKS.put(name, hook);
  }

  /** Whether the hook has run. */
  boolean held() {
    return !HOOKS.containsKey(name);
  }

  @Override
  public CdcClient open() {
    CdcClient client = delegate.open();
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, args) -> {
              if (method.getName().equals("readTable")
                  && ((TableQuery) args[0]).table().equalsIgnoreCase(table)) {
                Runnable hook = HOOKS.remove(name);
                if (hook != null) {
                  hook.run();
                }
              }
              try {
                return method.invoke(client, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
