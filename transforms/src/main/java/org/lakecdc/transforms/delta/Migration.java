package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * One migration of a table kind: the step from schema version {@code version - 1} to {@code
 * version} (docs/tables.md). Its changes and the new {@link TableProperties#SCHEMA_VERSION} go into
 * one Delta commit, so a table is never stamped without the changes nor changed without the stamp.
 * Migrations are append-only: a shipped one is never edited, reordered or removed.
 *
 * @param version the schema version this migration produces, from 1
 * @param description what it does, for logs
 * @param changes the metadata-only changes, applied in order
 */
public record Migration(int version, String description, List<SchemaChange> changes)
    implements Serializable {

  /**
   * Checks and copies the components.
   *
   * @param version the schema version this migration produces
   * @param description what it does
   * @param changes its changes
   * @throws IllegalArgumentException when the version is below 1
   * @throws NullPointerException when the description or a change is null
   */
  public Migration {
    if (version < 1) {
      throw new IllegalArgumentException("A migration's version starts at 1, not " + version);
    }
    Objects.requireNonNull(description, "description");
    changes = List.copyOf(changes);
  }

  /**
   * Checks that migrations are numbered 1, 2, ... in order, as a kind's list must be.
   *
   * @param migrations a kind's migrations
   * @return the same list, unmodifiable
   * @throws IllegalArgumentException when the i-th migration (from 0) does not have version i + 1
   */
  static List<Migration> checkOrdered(List<Migration> migrations) {
    for (int i = 0; i < migrations.size(); i++) {
      if (migrations.get(i).version() != i + 1) {
        throw new IllegalArgumentException(
            "Migration at position "
                + i
                + " has version "
                + migrations.get(i).version()
                + "; versions must be 1, 2, ... in order");
      }
    }
    return List.copyOf(migrations);
  }
}
