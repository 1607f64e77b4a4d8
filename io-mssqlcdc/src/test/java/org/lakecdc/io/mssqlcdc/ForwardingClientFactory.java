package org.lakecdc.io.mssqlcdc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * Test seam: opens the simulator's clients behind a proxy that records every {@link CdcClient} call
 * by method name and lets a test hook in before a call (to simulate cleanup during a read, or a
 * method that must not be called). Only for DoFn-level tests in one JVM: the hook is not
 * serialized.
 */
public final class ForwardingClientFactory implements CdcClientFactory {
  /** Runs before the named method; may throw to simulate a failure. */
  public interface Hook {
    void before(String method, Object[] args) throws Exception;
  }

  private final transient CdcClientFactory delegate;
  private final transient Hook hook;
  public final transient List<String> calls = Collections.synchronizedList(new ArrayList<>());

  /** Clients of {@code delegate}, each call run after {@code hook}. */
  public ForwardingClientFactory(CdcClientFactory delegate, Hook hook) {
    this.delegate = delegate;
    this.hook = hook;
  }

  @Override
  public CdcClient open() {
    CdcClient client = delegate.open();
    InvocationHandler handler =
        (proxy, method, args) -> {
          calls.add(method.getName());
          hook.before(method.getName(), args);
          try {
            return method.invoke(client, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(), new Class<?>[] {CdcClient.class}, handler);
  }
}
