package org.lakecdc.io.mssqlcdc.client;

/**
 * Transaction isolation for reads of a source table (snapshots, reconcile). Never {@code READ
 * UNCOMMITTED}/{@code NOLOCK}: a snapshot must only see committed rows (docs/options.md).
 */
public enum IsolationLevel {
  /** {@code READ COMMITTED}, SQL Server's default: waits for writers' locks. */
  READ_COMMITTED,
  /** {@code SNAPSHOT}: reads committed row versions without waiting; needs the database option. */
  SNAPSHOT;

  /**
   * The level an option names: {@code readCommitted} (also {@code read_committed}, {@code read
   * committed}) or {@code snapshot}, ignoring case and surrounding spaces.
   *
   * @param option the option's name for the message, e.g. {@code --isolationLevel}
   * @param text the option's value
   * @throws IllegalArgumentException for anything else, {@code readUncommitted} and {@code NOLOCK}
   *     included: "{@code <option> must be 'readCommitted' or 'snapshot' (never NOLOCK), not
   *     '<text>'}"
   */
  public static IsolationLevel fromOption(String option, String text) {
    String t = text == null ? "" : text.strip().toLowerCase(java.util.Locale.ROOT);
    return switch (t.replace("_", "").replace(" ", "")) {
      case "readcommitted" -> READ_COMMITTED;
      case "snapshot" -> SNAPSHOT;
      default ->
          throw new IllegalArgumentException(
              option + " must be 'readCommitted' or 'snapshot' (never NOLOCK), not '" + text + "'");
    };
  }
}
