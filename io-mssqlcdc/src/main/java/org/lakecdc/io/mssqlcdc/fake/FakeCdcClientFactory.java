package org.lakecdc.io.mssqlcdc.fake;

import java.nio.file.Path;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * Opens {@link FileBackedCdcClient}s over one fake server directory. Serializable: it holds the
 * directory as a string, so a pipeline can ship it to workers that see the same file system. The
 * test seam of the source and the demo's backend.
 */
public final class FakeCdcClientFactory implements CdcClientFactory {
  /** Serial form version. */
  private static final long serialVersionUID = 1L;

  /** The directory path, as given. */
  private final String directory;

  /**
   * A factory for the fake server in {@code directory}.
   *
   * @param directory the directory path, as {@link Path#of(String, String...)} reads it
   */
  public FakeCdcClientFactory(String directory) {
    this.directory = Objects.requireNonNull(directory, "directory");
  }

  /**
   * A factory for the fake server in {@code directory} (its absolute path is kept).
   *
   * @param directory the fake server's directory
   * @return the factory
   */
  public static FakeCdcClientFactory of(Path directory) {
    return new FakeCdcClientFactory(directory.toAbsolutePath().toString());
  }

  /**
   * The directory path.
   *
   * @return the path as given
   */
  public String directory() {
    return directory;
  }

  /**
   * Opens a reader of the directory; the caller closes it.
   *
   * @throws org.lakecdc.io.mssqlcdc.client.CdcException when the directory holds no fake server
   */
  @Override
  public CdcClient open() {
    return new FileBackedCdcClient(Path.of(directory));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FakeCdcClientFactory
        && directory.equals(((FakeCdcClientFactory) o).directory);
  }

  @Override
  public int hashCode() {
    return directory.hashCode();
  }

  @Override
  public String toString() {
    return "FakeCdcClientFactory[" + directory + "]";
  }
}
