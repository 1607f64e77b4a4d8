package org.lakecdc.transforms.finalization;

import java.util.List;
import org.apache.beam.sdk.schemas.Schema;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.SmallFileCompaction;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;

/**
 * The control table {@code table_finalization} (docs/tables.md "Control"): one row per target table
 * with its completeness verdict. All times UTC.
 */
public final class ControlTable {
  /** Column names. */
  public static final String TABLE_NAME = "table_name",
      FINALIZED_UNTIL = "finalized_until",
      END_LSN = "end_lsn",
      END_COMMIT_TS = "end_commit_ts",
      UPDATED_AT = "updated_at",
      APPLIED_LSN = "applied_lsn",
      SNAPSHOT_LSN = "snapshot_lsn",
      OPEN_SNAPSHOT_LSN = "open_snapshot_lsn",
      SNAPSHOT_WAVE = "snapshot_wave",
      LOST_PERIODS = "lost_periods";

  /** The {@code finalized_until} column's comment (also set by control migration 3). */
  public static final String FINALIZED_UNTIL_COMMENT =
      "The verdict (UTC): every period ending at or before it is complete in the table, except"
          + " periods overlapping lost_periods; only moves forward";

  /** The {@code lost_periods} column's comment (control migration 3). */
  public static final String LOST_PERIODS_COMMENT =
      "JSON [{from, to}] of UTC spans [from, to) whose changes CDC cleanup purged before they"
          + " were read (skipped or re-snapshotted past): a period overlapping one is never"
          + " complete; NULL when none";

  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required(
              TABLE_NAME,
              OutputType.STRING,
              "The table the verdict is about: its path or name, exactly as the job was given it"),
          DeltaColumn.nullable(FINALIZED_UNTIL, OutputType.TIMESTAMP_NTZ, FINALIZED_UNTIL_COMMENT),
          DeltaColumn.nullable(
              END_LSN, OutputType.STRING, "Batch end LSN that last moved the verdict"),
          DeltaColumn.nullable(
              END_COMMIT_TS,
              OutputType.TIMESTAMP_NTZ,
              "Commit time of end_lsn (UTC); finalized_until is it truncated to the granularity"),
          DeltaColumn.nullable(
              UPDATED_AT, OutputType.TIMESTAMP_NTZ, "When the verdict last moved (UTC)"),
          DeltaColumn.nullable(
              APPLIED_LSN,
              OutputType.STRING,
              "Silver tables: highest bronze change LSN applied; NULL otherwise"),
          DeltaColumn.nullable(
              SNAPSHOT_LSN,
              OutputType.STRING,
              "Silver tables: LSN of the bronze snapshot last rebuilt from"),
          DeltaColumn.nullable(
              OPEN_SNAPSHOT_LSN,
              OutputType.STRING,
              "Silver tables: S of the open chunked snapshot being applied wave by wave"),
          DeltaColumn.nullable(
              SNAPSHOT_WAVE, OutputType.INT, "Silver tables: last wave of that snapshot applied"),
          DeltaColumn.nullable(LOST_PERIODS, OutputType.STRING, LOST_PERIODS_COMMENT));

  /** The Beam schema of control rows. */
  public static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private ControlTable() {}

  /**
   * The table definition: columns with comments, the control kind's comment, and {@code
   * delta.checkpointInterval = 100} ({@link SmallFileCompaction}).
   */
  public static TableDefinition definition() {
    return new TableDefinition(
        TableKind.CONTROL,
        COLUMNS,
        TableKind.CONTROL.tableComment(),
        SmallFileCompaction.tableProperties(TableKind.CONTROL));
  }
}
