package org.lakecdc.transforms.snapshot;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * A client factory of the simulator whose clients run a one-shot hook right before the first {@code
 * readTable} of any of them (after that chunk's stamp, before its SELECT): a commit "during" a
 * chunked snapshot's read. Reads wait for the hook to finish, so every read but the hook's own
 * chunk's stamp starts after the hook's commit is visible. Hooks live in this JVM (the
 * DirectRunner's), by name.
 */
final class HookedClientFactory implements CdcClientFactory {
  private static final long serialVersionUID = 1L;
  private static final Map<String, Runnable> HOOKS = new ConcurrentHashMap<>();
  private static final Object LOCK = new Object();

  private final CdcClientFactory delegate;
  private final String name;

  HookedClientFactory(CdcClientFactory delegate, String name, Runnable hook) {
    this.delegate = delegate;
    this.name = name;
    HOOKS.put(name, hook);
  }

  /** Whether the hook has run. */
  boolean ran() {
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
              if (method.getName().equals("readTable")) {
                synchronized (LOCK) {
                  Runnable hook = HOOKS.remove(name);
                  if (hook != null) {
                    hook.run();
                  }
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
