package org.lakecdc.pipelines;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * A client factory of the simulator whose clients run a hook once, right before the first {@code
 * readTable} of any of them (a snapshot's read): cleanup "during" the read, or a read held until a
 * condition holds. Hooks live in this JVM by name, so the factory stays serializable for the
 * DirectRunner.
 */
final class ReadTableHook implements CdcClientFactory {
  private static final long serialVersionUID = 1L;
  private static final Map<String, Runnable> HOOKS = new ConcurrentHashMap<>();

  private final CdcClientFactory delegate;
  private final String name;

  private ReadTableHook(CdcClientFactory delegate, Runnable hook) {
    this.delegate = delegate;
    this.name = UUID.randomUUID().toString();
    HOOKS.put(name, hook);
  }

  /** {@code delegate}'s clients, running {@code hook} before the first {@code readTable}. */
  static CdcClientFactory before(CdcClientFactory delegate, Runnable hook) {
    return new ReadTableHook(delegate, hook);
  }

  @Override
  public CdcClient open() {
    CdcClient client = delegate.open();
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, args) -> {
              if (method.getName().equals("readTable")) {
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
