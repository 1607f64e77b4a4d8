package org.lakecdc.transforms.delta;

import io.delta.kernel.utils.CloseableIterator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Kernel {@link CloseableIterator}s over plain Java collections (Kernel's helpers are internal).
 */
final class KernelIterators {
  private KernelIterators() {}

  /** An iterator over one element. */
  static <T> CloseableIterator<T> single(T element) {
    return of(List.of(element).iterator());
  }

  /** A closeable view of an iterator; closing does nothing. */
  static <T> CloseableIterator<T> of(Iterator<T> iterator) {
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        return iterator.hasNext();
      }

      @Override
      public T next() {
        if (!iterator.hasNext()) {
          throw new NoSuchElementException();
        }
        return iterator.next();
      }

      @Override
      public void close() {}
    };
  }
}
