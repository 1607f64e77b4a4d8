package org.lakecdc.transforms.delta;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One spelling per table: the identity under which a table is named in the facts table ({@code
 * target}), the control table ({@code table_name}) and every message. The same bronze given as a
 * relative path, an absolute path or a {@code file:} URI is one table and gets one name.
 *
 * <ul>
 *   <li>A local path (no scheme) or a {@code file:} URI ({@code file:/x}, {@code file:///x}, {@code
 *       file://localhost/x}): the absolute, normalized local path ({@code /work/lake/dbo_orders}),
 *       resolved against the working directory; {@code .} and {@code ..} removed; no trailing
 *       separator. Symbolic links are not resolved (the table may not exist yet).
 *   <li>Any other URI ({@code s3a://bucket/x/}, {@code abfss://c@account.dfs.core.windows.net/x}):
 *       the scheme in lower case, the path normalized ({@link URI#normalize()}) and without a
 *       trailing {@code /}; authority, query and fragment as given.
 * </ul>
 */
public final class TablePaths {
  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

  private TablePaths() {}

  /**
   * The table's one spelling (see the class comment).
   *
   * @param pathOrUri a local path or a URI
   * @return the normalized identity
   * @throws IllegalArgumentException {@code Not a table path or URI: '<value>' (<reason>)} when the
   *     value is empty, not a valid URI, or a {@code file:} URI with a host other than localhost
   */
  public static String normalize(String pathOrUri) {
    if (pathOrUri == null || pathOrUri.isBlank()) {
      throw new IllegalArgumentException("Not a table path or URI: it is empty");
    }
    String value = pathOrUri.strip();
    try {
      if (!SCHEME.matcher(value).find()) {
        return local(Path.of(value));
      }
      URI uri = new URI(value);
      String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
      if (scheme.equals("file")) {
        String host = uri.getHost();
        if (host != null && !host.isEmpty() && !host.equalsIgnoreCase("localhost")) {
          throw new IllegalArgumentException(
              "Not a table path or URI: '" + value + "' (a file: URI names no remote host)");
        }
        return local(Path.of(new URI("file", null, uri.getPath(), null)));
      }
      URI normalized = uri.normalize();
      String path = normalized.getRawPath();
      while (path != null && path.length() > 1 && path.endsWith("/")) {
        path = path.substring(0, path.length() - 1);
      }
      StringBuilder text = new StringBuilder(scheme).append(':');
      if (normalized.getRawAuthority() != null) {
        text.append("//").append(normalized.getRawAuthority());
      }
      text.append(path == null ? "" : path);
      if (normalized.getRawQuery() != null) {
        text.append('?').append(normalized.getRawQuery());
      }
      if (normalized.getRawFragment() != null) {
        text.append('#').append(normalized.getRawFragment());
      }
      return text.toString();
    } catch (URISyntaxException | InvalidPathException e) {
      throw new IllegalArgumentException(
          "Not a table path or URI: '" + value + "' (" + e.getMessage() + ")", e);
    }
  }

  private static String local(Path path) {
    return path.toAbsolutePath().normalize().toString();
  }
}
