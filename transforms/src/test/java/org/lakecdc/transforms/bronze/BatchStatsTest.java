package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;

/** A batch's counts and its smallest and largest commit LSN and time. */
class BatchStatsTest {
  private static final Schema CHANGE =
      Schema.builder()
          .addStringField(MetadataColumns.CAPTURE_INSTANCE)
          .addStringField(MetadataColumns.START_LSN)
          .addInt32Field(MetadataColumns.OPERATION)
          .addLogicalTypeField(MetadataColumns.COMMIT_TS, SqlTypes.DATETIME)
          .build();

  private static Row row(String lsn, int operation, LocalDateTime ts) {
    return Row.withSchema(CHANGE).addValues("dbo_orders", lsn, operation, ts).build();
  }

  /**
   * Rows of one commit share their LSN's and commit time's instances; equal values of other
   * instances, and commits out of order, count the same: the extremes are those of the values.
   */
  @Test
  void extremesAndCountsOverCommitsSharingInstancesOrNot() {
    LocalDateTime t1 = LocalDateTime.of(2026, 11, 1, 5, 59, 59);
    LocalDateTime t2 = LocalDateTime.of(2026, 11, 1, 6, 0, 0);
    LocalDateTime t0 = LocalDateTime.of(2026, 11, 1, 5, 0, 0);
    String lsn1 = "0x0000002A000001000010";
    String lsn2 = "0x0000002A000001000020";
    String lsn0 = "0x0000002A000001000005";
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      rows.add(row(lsn1, MetadataColumns.OP_INSERT, t1));
    }
    rows.add(row(lsn2, MetadataColumns.OP_UPDATE_BEFORE, t2));
    rows.add(row(lsn2, MetadataColumns.OP_UPDATE_AFTER, t2));
    // An earlier commit after them, its values in new instances equal to nothing seen.
    rows.add(row(new String(lsn0.toCharArray()), MetadataColumns.OP_DELETE, t0.plusSeconds(0)));
    // The first commit's values again, equal but other instances.
    rows.add(
        row(
            new String(lsn1.toCharArray()),
            MetadataColumns.OP_INSERT,
            LocalDateTime.of(2026, 11, 1, 5, 59, 59)));

    BatchStats stats = BatchStats.of(7, rows);

    assertEquals(
        new BatchStats(
            7, 7, lsn0, lsn2, t0.toInstant(ZoneOffset.UTC), t2.toInstant(ZoneOffset.UTC), 1, 4, 1),
        stats);
  }
}
