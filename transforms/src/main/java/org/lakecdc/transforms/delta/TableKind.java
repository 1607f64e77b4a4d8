package org.lakecdc.transforms.delta;

import java.util.List;
import java.util.Locale;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * The kinds of Delta tables this project writes (docs/tables.md), each with its table comment and
 * its ordered, append-only list of {@link Migration}s. A table's {@link
 * TableProperties#SCHEMA_VERSION} is the number of its kind's migrations it has had; {@link
 * #currentVersion()} is the number this build knows. Opening a table at a lower version applies the
 * missing migrations ({@link DeltaTables#open}); a table at a higher version is refused.
 *
 * <p>Every kind is at version 1 except control, at version 3. Migration 1 of every kind records the
 * kind ({@link TableProperties#TABLE_KIND}) and the kind's table comment, so that a table created
 * without them (version 0: by hand, or by a tool that did not stamp it) is adopted. Control's
 * migration 2 adds silver's position columns ({@code applied_lsn}, {@code snapshot_lsn}, {@code
 * open_snapshot_lsn}, {@code snapshot_wave}) such a table lacks and rewrites the {@code
 * finalized_until} comment; its migration 3 adds {@code lost_periods} (spans of purged changes no
 * verdict covers). Later migrations are appended to a kind's list, never inserted.
 */
public enum TableKind {
  /** The append-only change log of one source table (docs/tables.md "Bronze"). */
  BRONZE(
      "Append-only SQL Server CDC change log: one row per change (an update is two rows,"
          + " _operation 3 then 4) plus snapshot rows (_operation 0, identified by _snapshot;"
          + " chunked snapshots also set _chunk). Order a key's changes by (_start_lsn,"
          + " _command_id, _seqval, _operation). Rebuild the current state from the newest"
          + " snapshot's rows plus the changes after it. Columns a newer capture instance adds are"
          + " appended (older rows NULL); columns it drops stay (NULL from then on)."),
  /** One row per batch and per event of a stream (docs/tables.md "Facts"). */
  FACTS(
      "One row per micro-batch of a CDC stream, batches without rows included, plus event rows"
          + " for snapshots, schema changes, capture-instance switches and skipped changes."
          + " (app_id, batch_id) identifies a batch."),
  /** The completeness verdict, one row per target table (docs/tables.md "Control"). */
  CONTROL(
      "Completeness verdict per CDC-fed table: every period before finalized_until is complete in"
          + " the target. Gate downstream work on it.",
      Later.controlSilverPosition(),
      Later.controlLostPeriods()),
  /** The current state of a source table, one row per key (silver, written by ApplyChanges). */
  SILVER(
      "Current state of the SQL Server table built from bronze: one row per key, deleted rows"
          + " removed. Its position is applied_lsn in the control table. Columns bronze gains are"
          + " added (older rows NULL)."),
  /**
   * The report of reconcile runs (docs/behaviour.md §11.3, {@code
   * org.lakecdc.transforms.reconcile.ReconcileReport}): per run one row per key bucket and one per
   * differing key, {@code run_id} grouping a run; appended once per run by the {@code Reconcile}
   * job. Its columns are the reference's schema version 0; migration 1 records the kind and
   * comment.
   */
  RECONCILE(
      "Report of reconcile runs: per run one row per key bucket and one per differing key;"
          + " run_id groups them."),
  /**
   * The versions of a source table's rows (history, written by ApplyChanges and the main job with
   * {@code --history}): one row per version of a key, current from {@code _valid_from_ts} until
   * {@code _valid_to_ts}.
   */
  HISTORY(
      "Slowly changing dimension (type 2) history of the SQL Server table built from bronze: one"
          + " row per version of a key, current from _valid_from_ts until _valid_to_ts (NULL while"
          + " current; UTC commit times). The state at T: _valid_from_ts <= T and (_valid_to_ts IS"
          + " NULL OR T < _valid_to_ts).");

  private final String tableComment;
  private final List<Migration> migrations;

  TableKind(String tableComment, Migration... later) {
    this.tableComment = tableComment;
    List<Migration> all = new java.util.ArrayList<>();
    all.add(
        new Migration(
            1,
            "record the table kind and the table comment",
            List.of(new SchemaChange.SetTableComment(tableComment))));
    all.addAll(List.of(later));
    this.migrations = Migration.checkOrdered(all);
  }

  /** The migrations after the first, per kind (never edited once shipped). */
  private static final class Later {
    private Later() {}

    /**
     * Control, version 2: a control table adopted at version 0 (made by hand or by an older tool,
     * with only the verdict columns) gains silver's position columns, and the {@code
     * finalized_until} comment is rewritten to the current text (C172).
     */
    static Migration controlSilverPosition() {
      return new Migration(
          2,
          "add silver's applied_lsn, snapshot_lsn, open_snapshot_lsn and snapshot_wave",
          List.of(
              new SchemaChange.AddColumns(
                  List.of(
                      DeltaColumn.nullable(
                          "applied_lsn",
                          OutputType.STRING,
                          "Silver tables: highest bronze change LSN applied; NULL otherwise"),
                      DeltaColumn.nullable(
                          "snapshot_lsn",
                          OutputType.STRING,
                          "Silver tables: LSN of the bronze snapshot last rebuilt from"),
                      DeltaColumn.nullable(
                          "open_snapshot_lsn",
                          OutputType.STRING,
                          "Silver tables: S of the open chunked snapshot being applied wave by"
                              + " wave"),
                      DeltaColumn.nullable(
                          "snapshot_wave",
                          OutputType.INT,
                          "Silver tables: last wave of that snapshot applied"))),
              new SchemaChange.SetColumnComment(
                  "finalized_until",
                  "The verdict (UTC): every period ending at or before it is complete in the"
                      + " table; only moves forward")));
    }

    /**
     * Control, version 3: the {@code lost_periods} column (spans whose changes CDC cleanup purged
     * before they were read, which no verdict covers), and the {@code finalized_until} comment that
     * names it.
     */
    static Migration controlLostPeriods() {
      return new Migration(
          3,
          "add lost_periods",
          List.of(
              new SchemaChange.AddColumns(
                  List.of(
                      DeltaColumn.nullable(
                          "lost_periods",
                          OutputType.STRING,
                          "JSON [{from, to}] of UTC spans [from, to) whose changes CDC cleanup"
                              + " purged before they were read (skipped or re-snapshotted past): a"
                              + " period overlapping one is never complete; NULL when none"))),
              new SchemaChange.SetColumnComment(
                  "finalized_until",
                  "The verdict (UTC): every period ending at or before it is complete in the"
                      + " table, except periods overlapping lost_periods; only moves forward")));
    }
  }

  /**
   * The value of {@link TableProperties#TABLE_KIND} for this kind: the lower-case name.
   *
   * @return e.g. {@code bronze}
   */
  public String propertyValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The table comment (Delta {@code metaData.description}) a new table of this kind gets.
   *
   * @return the comment
   */
  public String tableComment() {
    return tableComment;
  }

  /**
   * The migrations of this kind, in order: the i-th (from 0) has version i + 1.
   *
   * @return the unmodifiable list
   */
  public List<Migration> migrations() {
    return migrations;
  }

  /**
   * The schema version this build stamps on new tables of this kind and migrates old ones to.
   *
   * @return the number of migrations
   */
  public int currentVersion() {
    return migrations.size();
  }

  /**
   * The kind named by a {@link TableProperties#TABLE_KIND} value.
   *
   * @param value the property value, any case
   * @return the kind
   * @throws IllegalArgumentException {@code Unknown table kind '<value>'; known: bronze, facts,
   *     control, silver, reconcile, history}
   */
  public static TableKind fromPropertyValue(String value) {
    for (TableKind kind : values()) {
      if (kind.propertyValue().equalsIgnoreCase(value)) {
        return kind;
      }
    }
    throw new IllegalArgumentException(
        "Unknown table kind '"
            + value
            + "'; known: bronze, facts, control, silver, reconcile, history");
  }
}
