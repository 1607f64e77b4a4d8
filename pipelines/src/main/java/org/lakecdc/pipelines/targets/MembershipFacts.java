package org.lakecdc.pipelines.targets;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The facts rows of a table joining or leaving a running continuous run of many tables: a line
 * added to or removed from its {@code --tablesFile} while it runs. {@code Status} shows the newest
 * of each per table. A table listed when the run starts writes neither (its first batch or {@code
 * bootstrap} row says when it began).
 */
public final class MembershipFacts {
  /**
   * A table added to a running run: {@code detail} is where it is listed ({@code --tablesFile
   * tables.options line 3}); written before its planning (its snapshot, when new) and its stream.
   */
  public static final String EVENT_JOINED = "joined";

  /**
   * A table removed from a running run: {@code detail} is the listing it left ({@code --tablesFile
   * tables.options}); written when the removal is seen, before its read stops after the batch it is
   * reading (its position stays in its tables for a later run).
   */
  public static final String EVENT_LEFT = "left";

  private MembershipFacts() {}

  /**
   * Appends one {@code joined} or {@code left} row for {@code target} (app id: its stream's app id;
   * {@code target}: its bronze table; {@code rows} 0; {@code started_at} and {@code written_at}:
   * now, UTC), without a transaction id: a row per event seen.
   *
   * @param event {@link #EVENT_JOINED} or {@link #EVENT_LEFT}
   * @param detail where the table is (or was) listed
   * @return when the row says the event happened
   */
  public static Instant write(Target target, String event, String detail) {
    Instant now = Instant.now();
    target.tables().createIfAbsent(target.facts(), FactsTable.definition());
    target.appendFacts(
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, target.streamAppId())
                .set(FactsTable.ROWS, 0L)
                .set(FactsTable.EVENT, event)
                .set(FactsTable.DETAIL, detail)
                .set(FactsTable.TARGET, target.bronze())
                .set(FactsTable.STARTED_AT, now)
                .set(FactsTable.WRITTEN_AT, now)
                .build()),
        null,
        0,
        Map.of());
    return now;
  }
}
