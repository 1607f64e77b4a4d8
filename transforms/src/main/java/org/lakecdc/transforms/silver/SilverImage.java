package org.lakecdc.transforms.silver;

import java.util.Objects;
import org.apache.beam.sdk.values.Row;

/**
 * One key's latest image in a wave ({@link SilverMerge#merge}).
 *
 * @param row a row of silver's schema ({@link SilverTable#schema}; fields matched to silver's
 *     columns by name ignoring case). For an upsert the full silver row; for a delete the key
 *     columns, {@code _start_lsn} and {@code _commit_ts} set, the other fields null (their values
 *     are not read). {@code _start_lsn} is never null
 * @param delete true when the image deletes its key (bronze operation 1, or a 3 that moved the row
 *     to another key), false for an upsert (operation 0, 2 or 4)
 */
public record SilverImage(Row row, boolean delete) {
  /**
   * Checks the row.
   *
   * @param row the row
   * @param delete whether the image deletes its key
   * @throws NullPointerException when the row is null
   */
  public SilverImage {
    Objects.requireNonNull(row, "row");
  }

  /**
   * An upsert image.
   *
   * @param row the full silver row
   * @return the image
   */
  public static SilverImage upsert(Row row) {
    return new SilverImage(row, false);
  }

  /**
   * A delete image.
   *
   * @param row the key columns, {@code _start_lsn} and {@code _commit_ts}; other fields null
   * @return the image
   */
  public static SilverImage delete(Row row) {
    return new SilverImage(row, true);
  }
}
