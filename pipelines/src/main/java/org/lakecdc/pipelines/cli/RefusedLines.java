package org.lakecdc.pipelines.cli;

import java.util.List;
import java.util.Objects;

/**
 * Several refusals of one command line at once, in order: every bad line of a {@code --tablesFile}
 * (or table of {@code --tables}), each naming its file and line as a single refusal does ({@code
 * --tablesFile t.options line 3 (dbo_lineitem): --maxCommitsPerBatch must be …}). The command line
 * ends as for any refused option ({@link JobExit#errorLines}): one {@code error:} line per refusal,
 * exit code {@link JobExit#BAD_OPTION}, nothing written.
 */
public final class RefusedLines extends OptionRefusedException {
  private static final long serialVersionUID = 1L;

  private final List<String> lines;

  private RefusedLines(List<String> lines) {
    super(lines.get(0));
    this.lines = List.copyOf(lines);
  }

  /** The refusals, one line each, in order. */
  public List<String> lines() {
    return lines;
  }

  /**
   * Throws the refusals of {@code refusals} (null entries: accepted) when there is any, in order.
   *
   * @throws RefusedLines when at least one entry is not null
   */
  public static void throwIfAny(List<String> refusals) {
    List<String> refused = refusals.stream().filter(Objects::nonNull).toList();
    if (!refused.isEmpty()) {
      throw new RefusedLines(refused);
    }
  }
}
