package org.lakecdc.io.mssqlcdc.fake;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * Opens {@link FileBackedCdcClient}s over one fake server directory. Serializable: it holds the
 * directory as a string, so a pipeline can ship it to workers that see the same file system. The
 * test seam of the source and the demo's backend.
 */
public final class FakeCdcClientFactory implements CdcClientFactory {
  /** Serial form version: 2 since the factory carries the machine's clock. */
  private static final long serialVersionUID = 2L;

  /** The directory path, as given. */
  private final String directory;

  /** The machine's clock the clients' {@link FileBackedCdcClient#currentTime} runs on. */
  private final Clock clock;

  /**
   * A factory for the fake server in {@code directory}.
   *
   * @param directory the directory path, as {@link Path#of(String, String...)} reads it
   */
  public FakeCdcClientFactory(String directory) {
    this(directory, Clock.systemUTC());
  }

  /**
   * A factory for the fake server in {@code directory} whose clients run on {@code clock}: the
   * simulated server's clock ({@link FileBackedCdcClient#currentTime}) moves as {@code clock}
   * moves. The factory is serialized with the clock, so a clock shipped to workers must be {@link
   * java.io.Serializable} ({@link Clock#systemUTC()} and {@link Clock#fixed} are); a copy made by
   * serialization keeps its own time.
   *
   * @param directory the directory path, as {@link Path#of(String, String...)} reads it
   * @param clock the machine's clock; {@link Clock#systemUTC()} by default
   */
  public FakeCdcClientFactory(String directory, Clock clock) {
    this.directory = Objects.requireNonNull(directory, "directory");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * A factory for the fake server in {@code directory} (its absolute path is kept).
   *
   * @param directory the fake server's directory
   * @return the factory
   */
  public static FakeCdcClientFactory of(Path directory) {
    return of(directory, Clock.systemUTC());
  }

  /**
   * Like {@link #of(Path)}, with the machine's clock the clients run on.
   *
   * @param directory the fake server's directory
   * @param clock the machine's clock, see {@link #FakeCdcClientFactory(String, Clock)}
   * @return the factory
   */
  public static FakeCdcClientFactory of(Path directory, Clock clock) {
    return new FakeCdcClientFactory(directory.toAbsolutePath().toString(), clock);
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
    return new FileBackedCdcClient(Path.of(directory), clock);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FakeCdcClientFactory other
        && directory.equals(other.directory)
        && clock.equals(other.clock);
  }

  @Override
  public int hashCode() {
    return Objects.hash(directory, clock);
  }

  @Override
  public String toString() {
    return "FakeCdcClientFactory[" + directory + "]";
  }
}
