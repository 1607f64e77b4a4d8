package org.lakecdc.pipelines;

import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSError;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The local file system on a full disk, for Parquet data files only (names holding {@code
 * .parquet}, their temporary names included; the Delta log is written as usual): installed as
 * {@code fs.file.impl} with the cache off. {@link #MODE} says where the write fails: {@code write}
 * throws {@code IOException("No space left on device")} on the first write, {@code close} accepts
 * the bytes and throws it when the file is closed (where a small Parquet file is really written),
 * {@code fserror} throws it wrapped in Hadoop's {@link FSError}, as {@link RawLocalFileSystem} does
 * on a write.
 */
public class FullDiskFileSystem extends RawLocalFileSystem {
  /** The Hadoop configuration key of the mode: write, close or fserror. */
  public static final String MODE = "lakecdc.test.fullDisk.mode";

  @Override
  public FSDataOutputStream create(
      Path f,
      FsPermission permission,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    if (!f.getName().contains(".parquet")) {
      return super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    }
    return full();
  }

  @Override
  public FSDataOutputStream create(
      Path f,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    if (!f.getName().contains(".parquet")) {
      return super.create(f, overwrite, bufferSize, replication, blockSize, progress);
    }
    return full();
  }

  private FSDataOutputStream full() throws IOException {
    String mode = getConf().get(MODE, "close");
    OutputStream full =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            if (mode.equals("write")) {
              throw new IOException("No space left on device");
            }
            if (mode.equals("fserror")) {
              throw fsError(new IOException("No space left on device"));
            }
          }

          @Override
          public void close() throws IOException {
            throw new IOException("No space left on device");
          }
        };
    return new FSDataOutputStream(full, statistics);
  }

  /** Hadoop's FSError, whose constructor only Hadoop's own file systems may call. */
  private static FSError fsError(IOException cause) {
    try {
      java.lang.reflect.Constructor<FSError> c =
          FSError.class.getDeclaredConstructor(Throwable.class);
      c.setAccessible(true);
      return c.newInstance(cause);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot make an FSError", e);
    }
  }
}
