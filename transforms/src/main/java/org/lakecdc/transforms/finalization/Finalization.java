package org.lakecdc.transforms.finalization;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.beam.sdk.util.BackOff;
import org.apache.beam.sdk.util.BackOffUtils;
import org.apache.beam.sdk.util.FluentBackoff;
import org.apache.beam.sdk.util.Sleeper;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The completeness verdict of target tables in a control table (docs/tables.md "Control").
 *
 * <p>{@code finalized_until} of a table (UTC) means: every period that ends at or before it is
 * complete in the table; no source commit at or before that instant can still arrive. It is
 * advanced after the data it vouches for is committed, to {@code GREATEST(old, truncate(end commit
 * time, granularity))}: the period containing the end commit is excluded, because transactions
 * sharing that commit time may still be pending. It never moves backwards and is never stored in
 * table properties.
 *
 * <p>The control table holds one row per target and is rewritten in place (Delta file removes
 * through {@link DeltaTables#rewrite}); concurrent writers of the shared control table conflict, so
 * a rewrite that lost is recomputed from the new content and retried with backoff for about a
 * minute.
 *
 * <p>An instance remembers the verdict of each table it last read or wrote: since a verdict never
 * moves backwards, a candidate that is not after it cannot move the stored one, and {@link
 * #advance} returns without reading the control table (a committer calls it after every batch; the
 * verdict moves once per period). It also creates the control table once, on first use.
 */
public final class Finalization {
  private static final FluentBackoff RETRIES =
      FluentBackoff.DEFAULT
          .withInitialBackoff(Duration.millis(200))
          .withMaxBackoff(Duration.standardSeconds(10))
          .withMaxCumulativeBackoff(Duration.standardMinutes(1));

  private final DeltaTables tables;
  private final String controlPath;
  private final Clock clock;

  /** The verdict per table as this instance last read or wrote it (never ahead of the table's). */
  private final Map<String, LocalDateTime> known = new ConcurrentHashMap<>();

  private volatile boolean controlTableOpened;

  /**
   * @param tables the Delta access
   * @param controlPath path or URI of the control table; created on first use
   * @param clock the clock of {@code updated_at}
   */
  public Finalization(DeltaTables tables, String controlPath, Clock clock) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.controlPath = Objects.requireNonNull(controlPath, "controlPath");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** The verdict a batch ending at {@code endCommitTime} allows: the start of its period. */
  public static LocalDateTime candidate(Instant endCommitTime, Granularity granularity) {
    return granularity.truncate(LocalDateTime.ofInstant(endCommitTime, ZoneOffset.UTC));
  }

  /**
   * Moves the verdict of {@code table} to the candidate of {@code endCommitTime} when that is later
   * than the stored verdict (or none is stored); otherwise leaves it. A candidate that is not after
   * the verdict this instance last read or wrote for the table is not compared with the stored one
   * (which can only be later): the control table is neither read nor written.
   *
   * @param table the target's path or name, as the job was given it
   * @param endLsn the end LSN of the last committed batch
   * @param endCommitTime its commit time (UTC)
   * @param granularity the period size
   * @return the verdict after the call; when the control table was not read, the verdict this
   *     instance last read or wrote
   * @throws DeltaConflictException when concurrent writers kept winning for about a minute
   */
  public LocalDateTime advance(
      String table, Lsn endLsn, Instant endCommitTime, Granularity granularity) {
    LocalDateTime candidate = candidate(endCommitTime, granularity);
    LocalDateTime remembered = known.get(table);
    if (remembered != null && !candidate.isAfter(remembered)) {
      return remembered;
    }
    if (!controlTableOpened) {
      tables.createIfAbsent(controlPath, ControlTable.definition());
      controlTableOpened = true;
    }
    LocalDateTime verdict =
        rewriteWithRetries(
            rows -> {
              List<Row> updated = new ArrayList<>(rows.size() + 1);
              boolean found = false;
              for (Row row : rows) {
                if (!table.equals(row.getString(ControlTable.TABLE_NAME))) {
                  updated.add(row);
                  continue;
                }
                found = true;
                LocalDateTime current = finalizedUntil(row);
                if (current != null && !candidate.isAfter(current)) {
                  return new Rewrite<>(null, current);
                }
                updated.add(withVerdict(row, candidate, endLsn, endCommitTime));
              }
              if (!found) {
                updated.add(withVerdict(newRow(table), candidate, endLsn, endCommitTime));
              }
              return new Rewrite<>(updated, candidate);
            });
    known.merge(table, verdict, (a, b) -> a.isAfter(b) ? a : b);
    return verdict;
  }

  /**
   * One table's verdict move of {@link #advanceAll}: the arguments of {@link #advance}.
   *
   * @param table the target's path or name, as the job was given it
   * @param endLsn the end LSN of the table's last committed batch
   * @param endCommitTime its commit time (UTC)
   * @param granularity the period size
   */
  public record Advance(String table, Lsn endLsn, Instant endCommitTime, Granularity granularity) {}

  /**
   * {@link #advance} of many tables in one control rewrite (a committer round's verdicts): the
   * tables whose candidate is after the verdict this instance knows are read and, those whose
   * stored verdict the candidate passes, moved together in one commit; the others cost nothing.
   *
   * @param advances one per table, distinct tables
   * @return each table's verdict after the call, by table
   * @throws IllegalArgumentException when a table is given twice
   * @throws DeltaConflictException when concurrent writers kept winning for about a minute
   */
  public Map<String, LocalDateTime> advanceAll(List<Advance> advances) {
    Map<String, LocalDateTime> verdicts = new LinkedHashMap<>();
    Map<String, Advance> moving = new LinkedHashMap<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (Advance a : advances) {
      if (!seen.add(a.table())) {
        throw new IllegalArgumentException(
            "The verdict of " + a.table() + " is advanced twice in one control rewrite");
      }
      LocalDateTime remembered = known.get(a.table());
      if (remembered != null
          && !candidate(a.endCommitTime(), a.granularity()).isAfter(remembered)) {
        verdicts.put(a.table(), remembered);
      } else {
        moving.put(a.table(), a);
      }
    }
    if (moving.isEmpty()) {
      return verdicts;
    }
    if (!controlTableOpened) {
      tables.createIfAbsent(controlPath, ControlTable.definition());
      controlTableOpened = true;
    }
    Map<String, LocalDateTime> moved =
        rewriteWithRetries(
            rows -> {
              List<Row> updated = new ArrayList<>(rows.size() + moving.size());
              Map<String, LocalDateTime> after = new LinkedHashMap<>();
              boolean changed = false;
              for (Row row : rows) {
                String table = row.getString(ControlTable.TABLE_NAME);
                Advance a = moving.get(table);
                if (a == null) {
                  updated.add(row);
                  continue;
                }
                LocalDateTime candidate = candidate(a.endCommitTime(), a.granularity());
                LocalDateTime current = finalizedUntil(row);
                if (current != null && !candidate.isAfter(current)) {
                  updated.add(row);
                  after.put(table, current);
                } else {
                  updated.add(withVerdict(row, candidate, a.endLsn(), a.endCommitTime()));
                  after.put(table, candidate);
                  changed = true;
                }
              }
              for (Advance a : moving.values()) {
                if (!after.containsKey(a.table())) {
                  LocalDateTime candidate = candidate(a.endCommitTime(), a.granularity());
                  updated.add(
                      withVerdict(newRow(a.table()), candidate, a.endLsn(), a.endCommitTime()));
                  after.put(a.table(), candidate);
                  changed = true;
                }
              }
              return new Rewrite<>(changed ? updated : null, after);
            });
    moved.forEach((table, verdict) -> known.merge(table, verdict, (x, y) -> x.isAfter(y) ? x : y));
    verdicts.putAll(moved);
    return verdicts;
  }

  /**
   * Removes the row of {@code table}: its verdict vouched for a table that no longer exists (the
   * bronze table at that path was deleted, or a new one was created there), so no period of the new
   * table is complete until its own data says so.
   *
   * @param table the target's path or name
   * @return the verdict the removed row held, or empty when the control table had no row for it
   * @throws DeltaConflictException when concurrent writers kept winning for about a minute
   */
  public Optional<LocalDateTime> forget(String table) {
    known.remove(table);
    if (!tables.exists(controlPath)) {
      return Optional.empty();
    }
    return rewriteWithRetries(
        rows -> {
          List<Row> kept = new ArrayList<>(rows.size());
          Optional<LocalDateTime> removed = null;
          for (Row row : rows) {
            if (table.equals(row.getString(ControlTable.TABLE_NAME))) {
              removed = Optional.ofNullable(finalizedUntil(row));
            } else {
              kept.add(row);
            }
          }
          return removed == null
              ? new Rewrite<>(null, Optional.empty())
              : new Rewrite<>(kept, removed);
        });
  }

  /**
   * The control row of {@code table}, as stored (fields of {@link ControlTable#SCHEMA}).
   *
   * @param table the target's path or name, as the job was given it
   * @return the row, or empty when the control table or its row does not exist
   */
  public Optional<Row> row(String table) {
    if (!tables.exists(controlPath)) {
      return Optional.empty();
    }
    for (Row row : tables.scan(controlPath, ControlTable.SCHEMA)) {
      if (table.equals(row.getString(ControlTable.TABLE_NAME))) {
        return Optional.of(row);
      }
    }
    return Optional.empty();
  }

  /**
   * Sets a silver table's position fields of its control row ({@code applied_lsn}, {@code
   * snapshot_lsn}, {@code open_snapshot_lsn}, {@code snapshot_wave}; docs/behaviour.md §10.2 step
   * 15), inserting the row (without a verdict) when missing; the verdict fields are left as they
   * are. Nothing is written when the row already holds these values. Retried on conflicts like
   * {@link #advance}. The silver table's own domain metadata is the truth; this copy is for readers
   * of the control table and is repaired from it by the next apply.
   *
   * @param table the silver table's path or name
   * @param appliedLsn highest bronze LSN applied, or null
   * @param snapshotLsn LSN of the snapshot last rebuilt from, or null
   * @param openSnapshotLsn S of the open chunked snapshot being applied, or null
   * @param snapshotWave last wave of that snapshot applied, or null
   * @return true when the row was written
   * @throws DeltaConflictException when concurrent writers kept winning for about a minute
   */
  public boolean recordSilverPosition(
      String table,
      @Nullable String appliedLsn,
      @Nullable String snapshotLsn,
      @Nullable String openSnapshotLsn,
      @Nullable Integer snapshotWave) {
    return rewriteRow(
        table,
        mine -> {
          if (mine != null
              && Objects.equals(appliedLsn, mine.getString(ControlTable.APPLIED_LSN))
              && Objects.equals(snapshotLsn, mine.getString(ControlTable.SNAPSHOT_LSN))
              && Objects.equals(openSnapshotLsn, mine.getString(ControlTable.OPEN_SNAPSHOT_LSN))
              && Objects.equals(snapshotWave, mine.getInt32(ControlTable.SNAPSHOT_WAVE))) {
            return new Rewrite<>(null, false);
          }
          return new Rewrite<>(
              List.of(
                  Row.fromRow(mine == null ? newRow(table) : mine)
                      .withFieldValue(ControlTable.APPLIED_LSN, appliedLsn)
                      .withFieldValue(ControlTable.SNAPSHOT_LSN, snapshotLsn)
                      .withFieldValue(ControlTable.OPEN_SNAPSHOT_LSN, openSnapshotLsn)
                      .withFieldValue(ControlTable.SNAPSHOT_WAVE, snapshotWave)
                      .build()),
              true);
        });
  }

  /**
   * Rewrites the control row of {@code table} (with retries, {@link #rewriteWithRetries}): {@code
   * change} gets the stored row (null when none) and returns its replacement as a one-row list, or
   * null rows to write nothing; the other tables' rows are kept as they are.
   */
  private <T> T rewriteRow(String table, Function<@Nullable Row, Rewrite<T>> change) {
    if (!controlTableOpened) {
      tables.createIfAbsent(controlPath, ControlTable.definition());
      controlTableOpened = true;
    }
    return rewriteWithRetries(
        rows -> {
          List<Row> others = new ArrayList<>(rows.size() + 1);
          Row mine = null;
          for (Row row : rows) {
            if (table.equals(row.getString(ControlTable.TABLE_NAME))) {
              mine = row;
            } else {
              others.add(row);
            }
          }
          Rewrite<T> rewrite = change.apply(mine);
          if (rewrite.rows() == null) {
            return rewrite;
          }
          others.addAll(rewrite.rows());
          return new Rewrite<>(others, rewrite.result());
        });
  }

  /** The control rows to write (null: write nothing) and the result to return once written. */
  private record Rewrite<T>(@Nullable List<Row> rows, T result) {}

  /**
   * Reads the control rows, computes the rewrite and commits it; a rewrite that lost to a
   * concurrent writer is recomputed from the new content, with backoff for about a minute.
   */
  private <T> T rewriteWithRetries(Function<List<Row>, Rewrite<T>> change) {
    BackOff backOff = RETRIES.backoff();
    while (true) {
      // The version first: the rewrite replaces exactly the content the rows were computed from
      // (a commit between the scan and the rewrite is a conflict, not a lost update).
      long version = tables.version(controlPath);
      Rewrite<T> rewrite = change.apply(tables.scan(controlPath, ControlTable.SCHEMA));
      if (rewrite.rows() == null) {
        return rewrite.result();
      }
      try {
        tables.rewrite(
            controlPath, version, ControlTable.SCHEMA, rewrite.rows(), null, 0, Map.of());
        return rewrite.result();
      } catch (DeltaConflictException e) {
        try {
          if (!BackOffUtils.next(Sleeper.DEFAULT, backOff)) {
            throw e;
          }
        } catch (IOException | InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /**
   * Records in the control row of {@code table} that the changes of {@code lost} are gone for good
   * ({@link LostPeriod}; {@code lost_periods}, merged with those already recorded), inserting the
   * row without a verdict when missing. Called before the verdict can move past the gap (before the
   * facts commit of the batch that skipped it, before a re-snapshot's stream starts), so no verdict
   * ever covers a lost period; recording the same span again changes nothing. Retried on conflicts
   * like {@link #advance}.
   *
   * @param table the target's path or name
   * @param lost the spans to record
   * @return the table's lost periods after the call
   * @throws DeltaConflictException when concurrent writers kept winning for about a minute
   */
  public List<LostPeriod> recordLost(String table, List<LostPeriod> lost) {
    return rewriteRow(
        table,
        mine -> {
          List<LostPeriod> before =
              mine == null
                  ? List.of()
                  : LostPeriod.fromJson(mine.getString(ControlTable.LOST_PERIODS));
          List<LostPeriod> after = LostPeriod.merge(before, lost);
          if (after.equals(before)) {
            return new Rewrite<>(null, after);
          }
          return new Rewrite<>(
              List.of(
                  Row.fromRow(mine == null ? newRow(table) : mine)
                      .withFieldValue(ControlTable.LOST_PERIODS, LostPeriod.toJson(after))
                      .build()),
              after);
        });
  }

  /** The lost periods recorded for {@code table} ({@link #recordLost}), in order; none: empty. */
  public List<LostPeriod> lostPeriods(String table) {
    return row(table)
        .map(r -> LostPeriod.fromJson(r.getString(ControlTable.LOST_PERIODS)))
        .orElse(List.of());
  }

  /** The stored verdict of {@code table}, if any. */
  public Optional<LocalDateTime> verdict(String table) {
    return Optional.ofNullable(verdicts().get(table));
  }

  /**
   * The stored verdict of every table that has one, by table name (UTC date-times), read in one
   * scan of the control table: what {@link #verdict} gives for each, for a caller that asks about
   * many tables (a run's summary). Empty when the control table does not exist.
   */
  public Map<String, LocalDateTime> verdicts() {
    if (!tables.exists(controlPath)) {
      return Map.of();
    }
    // A table's first row counts, as a rewrite leaves one row per table; rows without a verdict
    // are dropped after.
    Map<String, LocalDateTime> verdicts = new HashMap<>();
    for (Row row : tables.scan(controlPath, ControlTable.SCHEMA)) {
      String table = row.getString(ControlTable.TABLE_NAME);
      if (!verdicts.containsKey(table)) {
        verdicts.put(table, finalizedUntil(row));
      }
    }
    verdicts.values().removeIf(Objects::isNull);
    return verdicts;
  }

  /** The control table's path or URI. */
  public String controlPath() {
    return controlPath;
  }

  /**
   * True when the period ending at {@code periodEndUtc} is complete in {@code table}: a verdict
   * exists, {@code periodEnd <= finalized_until}, and no lost period ({@link #recordLost}) holds
   * the period of the verdict's granularity (or a finer one) that ends there ({@code from <
   * periodEnd <= to}). Consumers of {@code [start, end)} wait until this is true for {@code end};
   * for a coarser period use {@link #isFinal(String, LocalDateTime, LocalDateTime)}.
   *
   * @param periodEndUtc the period's end as a UTC date-time
   */
  public boolean isFinal(String table, LocalDateTime periodEndUtc) {
    Optional<Row> row = row(table);
    if (row.isEmpty() || finalizedUntil(row.get()) == null) {
      return false;
    }
    if (periodEndUtc.isAfter(finalizedUntil(row.get()))) {
      return false;
    }
    for (LostPeriod lost : LostPeriod.fromJson(row.get().getString(ControlTable.LOST_PERIODS))) {
      if ((lost.from() == null || lost.from().isBefore(periodEndUtc))
          && !periodEndUtc.isAfter(lost.to())) {
        return false;
      }
    }
    return true;
  }

  /**
   * True when the period {@code [periodStartUtc, periodEndUtc)} is complete in {@code table}: its
   * end is at or before {@code finalized_until} and it overlaps none of the table's lost periods
   * (changes CDC cleanup purged before they were read; {@link #recordLost}).
   *
   * @param periodStartUtc the period's start as a UTC date-time (inclusive)
   * @param periodEndUtc the period's end as a UTC date-time (exclusive)
   */
  public boolean isFinal(String table, LocalDateTime periodStartUtc, LocalDateTime periodEndUtc) {
    Optional<Row> row = row(table);
    if (row.isEmpty()
        || finalizedUntil(row.get()) == null
        || periodEndUtc.isAfter(finalizedUntil(row.get()))) {
      return false;
    }
    return LostPeriod.fromJson(row.get().getString(ControlTable.LOST_PERIODS)).stream()
        .noneMatch(lost -> lost.overlaps(periodStartUtc, periodEndUtc));
  }

  /**
   * {@link #isFinal(String, LocalDateTime)} for a period end with a zone or offset: it is compared
   * in UTC (C146).
   *
   * @param periodEnd the period's end, any zone
   */
  public boolean isFinal(String table, java.time.OffsetDateTime periodEnd) {
    return isFinal(table, periodEnd.atZoneSameInstant(ZoneOffset.UTC).toLocalDateTime());
  }

  private static LocalDateTime finalizedUntil(Row row) {
    return row.getLogicalTypeValue(ControlTable.FINALIZED_UNTIL, LocalDateTime.class);
  }

  private static Row newRow(String table) {
    List<Object> values = new ArrayList<>();
    for (int i = 0; i < ControlTable.SCHEMA.getFieldCount(); i++) {
      values.add(null);
    }
    values.set(ControlTable.SCHEMA.indexOf(ControlTable.TABLE_NAME), table);
    return Row.withSchema(ControlTable.SCHEMA).attachValues(values);
  }

  private Row withVerdict(Row row, LocalDateTime verdict, Lsn endLsn, Instant endCommitTime) {
    return Row.fromRow(row)
        .withFieldValue(ControlTable.FINALIZED_UNTIL, verdict)
        .withFieldValue(ControlTable.END_LSN, endLsn.toString())
        .withFieldValue(
            ControlTable.END_COMMIT_TS, LocalDateTime.ofInstant(endCommitTime, ZoneOffset.UTC))
        .withFieldValue(
            ControlTable.UPDATED_AT, LocalDateTime.ofInstant(clock.instant(), ZoneOffset.UTC))
        .build();
  }
}
