package org.lakecdc.pipelines.cli;

/**
 * An option value refused once the target has been looked at, before anything is written: the value
 * is well formed but does not fit the tables it names (a new {@code --factsTable} for a target that
 * already has batches). The command line ends as for any refused option: one {@code error:} line
 * with the message (one per refusal of {@link RefusedLines}), exit code {@link JobExit#BAD_OPTION}.
 */
public class OptionRefusedException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message one line naming the option, its value and what to do instead
   */
  public OptionRefusedException(String message) {
    super(message);
  }
}
