package org.lakecdc.pipelines;

import java.net.URI;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local file system under the URI scheme {@value #SCHEME} ({@code lakecdctest:///tmp/x} is the
 * local {@code /tmp/x}): a stand-in for an object store whose Hadoop FileSystem is named only in
 * the job's Hadoop configuration ({@code fs.lakecdctest.impl}), never registered on the class path.
 */
public class SchemeFileSystem extends RawLocalFileSystem {
  /** The URI scheme. */
  public static final String SCHEME = "lakecdctest";

  private static final URI NAME = URI.create(SCHEME + ":///");

  @Override
  public URI getUri() {
    return NAME;
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }
}
