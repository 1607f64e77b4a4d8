package org.lakecdc.io.mssqlcdc.client;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;

/**
 * The one seam between this project and SQL Server CDC: everything the source, snapshots and
 * reconcile need to know about a database's CDC objects. Two implementations exist: the T-SQL
 * client over JDBC (the only code that knows T-SQL) and the file-backed simulator used in tests and
 * the demo ({@code org.lakecdc.io.mssqlcdc.fake}).
 *
 * <p>Conventions: LSNs are {@link Lsn}s; every time is UTC (commit times are converted from the
 * server's zone as docs/sql-server.md "Connection settings" says), except {@link
 * CaptureInstance#createDate()}, which is server-local like SQL Server reports it. "None" answers
 * from SQL Server (NULL, {@code 0x00...}) are {@link Optional#empty()}. A client is used by one
 * thread at a time and must be closed.
 *
 * <p>Errors: an unknown capture instance raises {@link CaptureInstanceNotFoundError} listing those
 * that exist; the source raises {@link DataLossError} and {@link SchemaChangedError} from what the
 * client answers; other database failures are {@link CdcException}s naming the operation.
 */
public interface CdcClient extends AutoCloseable {

  /**
   * {@code sys.fn_cdc_get_max_lsn()}: the last entry of {@code cdc.lsn_time_mapping}.
   *
   * @return the LSN, or empty when capture has never written an entry
   */
  Optional<Lsn> maxLsn();

  /**
   * {@code sys.fn_cdc_get_min_lsn(ci)}: the capture instance's low watermark; rows below it may
   * have been removed by cleanup.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist (SQL Server answers
   *     {@code 0x00...})
   */
  Lsn minLsn(String captureInstance);

  /** {@code sys.fn_cdc_increment_lsn}: the smallest LSN greater than {@code lsn}. */
  Lsn incrementLsn(Lsn lsn);

  /**
   * {@code sys.fn_cdc_decrement_lsn}: the greatest LSN smaller than {@code lsn}; ZERO stays ZERO.
   */
  Lsn decrementLsn(Lsn lsn);

  /**
   * {@code sys.fn_cdc_map_lsn_to_time} restricted to commit LSNs: the UTC commit time of the {@code
   * cdc.lsn_time_mapping} row whose {@code start_lsn} equals {@code lsn}.
   *
   * @return the commit, or empty when {@code lsn} is not a commit LSN (a DDL LSN, any LSN between
   *     entries, a purged entry)
   */
  Optional<Commit> commit(Lsn lsn);

  /**
   * The last {@code cdc.lsn_time_mapping} row with {@code start_lsn <= lsn} (used for the commit
   * time of a DDL LSN, which has no row of its own).
   *
   * @return the commit, or empty when none is at or before {@code lsn}
   */
  Optional<Commit> lastCommitAtOrBefore(Lsn lsn);

  /**
   * The reference's {@code time_to_lsn} (docs/options.md "Seeding from a copy", docs/scenarios.md
   * C240, C245): the LSN of the last commit at or before a UTC instant, as {@code
   * sys.fn_cdc_map_time_to_lsn('largest less than or equal', t)} answers it (Microsoft docs
   * "sys.fn_cdc_map_time_to_lsn"): the largest {@code start_lsn} of {@code cdc.lsn_time_mapping}
   * (commits, and capture's idle entries, which count as commits everywhere in this interface)
   * whose {@code tran_end_time} is at or before t.
   *
   * <p>t is {@code utc} truncated to whole seconds and converted from UTC to the server's clock
   * (docs/sql-server.md "Connection settings"): as is for UTC, plus the offset for the pre-2022
   * fixed-offset fallback, and {@code AT TIME ZONE} for a named zone. In a named zone, t is the
   * earlier of the zone's wall time at the instant and its wall time an hour later minus one hour:
   * in the hour before a daylight-saving fall-back this is an hour earlier than the wall time, so
   * no commit of the repeated hour's second pass (which reads earlier local times but happened
   * later) is included. Every approximation goes earlier: the answer is never a commit after the
   * instant, but may miss commits of the last second (the fraction is dropped) or, before a
   * fall-back, of the last hour. The fixed-offset fallback is exact only in zones without daylight
   * saving.
   *
   * <p>The job's seed from an existing copy ({@code --seedTable} with a time {@code --seedAsOf},
   * docs/options.md "Seeding from a copy") stamps the copy with this LSN.
   *
   * @param utc the instant, UTC; fractions of a second are ignored
   * @return the LSN, or empty when no commit is at or before the instant (SQL Server answers NULL
   *     or {@code 0x00...}), including when cleanup has removed the mapping rows up to it
   * @throws IllegalArgumentException when {@code utc} is outside SQL Server's {@code datetime}
   *     range (1753-01-02 to 9999-12-30 UTC, allowing for any zone offset)
   * @throws NullPointerException when {@code utc} is null
   */
  Optional<Lsn> lastCommitLsnAtOrBefore(Instant utc);

  /**
   * The n-th {@code cdc.lsn_time_mapping} row strictly after {@code lsn}, in LSN order ({@code
   * MAX(start_lsn)} of {@code TOP (n)}): the end of a batch of at most n commits. Idle entries and
   * other tables' commits count.
   *
   * @param n at least 1
   * @return the n-th commit after {@code lsn}, the last one when fewer than n follow, or empty when
   *     none follows
   */
  Optional<Commit> nthCommitAfter(Lsn lsn, int n);

  /**
   * The number of {@code cdc.lsn_time_mapping} rows with {@code afterLsn < start_lsn <= upToLsn}
   * ({@code COUNT_BIG(*)}): the commits a read of that interval claims one batch end at a time.
   * Idle entries and other tables' commits count, as in {@link #nthCommitAfter}.
   *
   * @return 0 when {@code upToLsn} is not after {@code afterLsn}
   */
  long commitCount(Lsn afterLsn, Lsn upToLsn);

  /**
   * The capture instances of the table that {@code captureInstance} tracks, oldest first (by create
   * date, then start LSN). At most two per table (a SQL Server limit).
   *
   * @throws CaptureInstanceNotFoundError when {@code captureInstance} does not exist
   */
  List<CaptureInstance> captureInstances(String captureInstance);

  /**
   * {@code sys.sp_cdc_get_captured_columns}: the columns the instance captures, by {@code
   * column_ordinal}, with computed columns marked.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   */
  List<CapturedColumn> capturedColumns(String captureInstance);

  /**
   * {@code sys.sp_cdc_get_ddl_history}: DDL on the instance's table with {@code afterLsn < ddl_lsn
   * <= upToLsn}, in LSN order.
   */
  List<DdlChange> ddlHistory(String captureInstance, Lsn afterLsn, Lsn upToLsn);

  /**
   * Streams the change rows of one capture instance in an LSN interval (see {@link ChangeQuery}).
   * Rows are never all held in memory. A range cleanup has purged reads as empty, as SQL Server's
   * change table does; callers re-check {@link #minLsn(String)} after reading.
   */
  CloseableIterator<ChangeRow> readChanges(ChangeQuery query);

  /**
   * Cuts the instance's change rows with {@code fromLsn <= __$start_lsn <= toLsn} into {@code n}
   * tiles of nearly equal row counts ({@code NTILE(n) OVER (ORDER BY __$start_lsn)}), one {@link
   * SplitPoint} per non-empty tile, ordered by bound. Fewer rows than n give one tile per row.
   */
  List<SplitPoint> splitPoints(String captureInstance, Lsn fromLsn, Lsn toLsn, int n);

  /**
   * A cheap estimate of how many change rows {@link #readChanges} would return for the instance's
   * LSN interval {@code [fromLsn, toLsn]} (both ends inclusive), for sizing work ({@code @GetSize},
   * progress) rather than for correctness: one row per change table row, so an update counts twice
   * (its before and after images, operations 3 and 4). It may be approximate: rows of commits that
   * become visible, or are cleaned up, while it runs may or may not count, and an implementation
   * may answer from statistics. Never negative; 0 when {@code fromLsn > toLsn}.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   */
  long estimatedChangeRows(String captureInstance, Lsn fromLsn, Lsn toLsn);

  /**
   * Streams a source table's current rows in one key range (see {@link TableQuery}), for snapshots
   * and reconcile. Values use the Java types of {@link ChangeRow}.
   */
  CloseableIterator<List<Object>> readTable(TableQuery query);

  /**
   * Plans key ranges of a source table for a snapshot read in parallel: the first key tuple of each
   * tile 2..n' of {@code NTILE(n') OVER (ORDER BY <keyColumns>)} over the table's current rows,
   * where {@code n' = min(n, rows)}. Keys sort as {@code ORDER BY} sorts them: column by column,
   * NULL first, strings by the column's collation. One query (NTILE with LAG, or keyset seeks of
   * {@code rows / n'} rows), no parameters, under {@code isolation}.
   *
   * <p>Tile i (from 1) holds {@code rows / n'} rows, plus one for the first {@code rows % n'}
   * tiles, as NTILE deals them: 10 rows in 3 tiles are 4, 3, 3. The answer cuts the table into
   * {@code [first key, t2), [t2, t3), ..., [tn', end)}, which {@link TableQuery} reads exactly once
   * each.
   *
   * @param schema source schema, e.g. {@code dbo}
   * @param table source table name
   * @param keyColumns the columns the tiles are over, in order; at least one (normally the capture
   *     instance's {@link CaptureInstance#keyColumns()})
   * @param n the number of tiles wanted, at least 1
   * @param isolation the isolation level of the query
   * @return n' - 1 key tuples in ascending order, each with one value per key column in the Java
   *     types of {@link ChangeRow} (values may be null); empty when {@code n' <= 1} (no rows, one
   *     row, or {@code n = 1}). Over columns that are not unique, consecutive tuples may be equal
   * @throws IllegalArgumentException when {@code n < 1} or {@code keyColumns} is empty
   * @throws CdcException for an unknown table or key column
   */
  List<List<Object>> keyTiles(
      String schema, String table, List<String> keyColumns, int n, IsolationLevel isolation);

  /**
   * {@code MIN} and {@code MAX} of one key column over the table's rows with a non-NULL value (two
   * index seeks in one statement, {@code SELECT (SELECT MIN(k) ...) AS lo, (SELECT MAX(k) ...) AS
   * hi}), under {@code isolation}. Values in the Java types of {@link ChangeRow}; strings compare
   * under the column's collation.
   *
   * @return {@code [min, max]}, or empty when no row has a non-NULL key
   * @throws CdcException for an unknown table or column
   */
  Optional<List<Object>> keyRange(
      String schema, String table, String keyColumn, IsolationLevel isolation);

  /**
   * The last key tuple in {@code ORDER BY} order ({@code SELECT TOP (1) <keys> ... ORDER BY k1
   * DESC, ..., kn DESC}), under {@code isolation}.
   *
   * @return the key, or empty for an empty table
   */
  Optional<List<Object>> keyMax(
      String schema, String table, List<String> keyColumns, IsolationLevel isolation);

  /**
   * The key at offset {@code n} (0-based: the (n+1)-th key) in {@code ORDER BY} order among the
   * rows with {@code lower <= (keys) < upper} (docs/scenarios.md C103): each seekable piece of the
   * range takes its own {@code TOP (n + 1)} ordered by the key, and the union is ordered and offset
   * by n rows, so at most a few times n keys are read.
   *
   * @param lowerInclusive the range's first key, or empty for the start (NULL keys included)
   * @param upperExclusive the first key after the range, or empty for the end
   * @param n at least 0
   * @return the key, or empty when the range holds n keys or fewer
   */
  Optional<List<Object>> keyBound(
      String schema,
      String table,
      List<String> keyColumns,
      Optional<List<Object>> lowerInclusive,
      Optional<List<Object>> upperExclusive,
      long n,
      IsolationLevel isolation);

  /**
   * Row counts per slice of a fixed grid over one integer key column, in one server-side {@code
   * GROUP BY}: slice = {@code floor(key / width)} (negative keys floored), rows with a NULL key
   * excluded, restricted to {@code low <= key <= high}.
   *
   * @param width at least 1
   * @return slice number to its row count, ascending, only non-empty slices
   */
  SortedMap<Long, Long> keySlices(
      String schema,
      String table,
      String keyColumn,
      long width,
      long low,
      long high,
      IsolationLevel isolation);

  /**
   * Reconcile's tier 1 on the server (docs/behaviour.md §11.2, docs/tables.md "Reconcile"): one
   * scan of the table grouping its rows by fine bucket {@code floor(ordinal / width)} of one key
   * column's ordinal, with {@code COUNT_BIG(*)} and {@code SUM(CAST(ordinal AS decimal(38,0)))} per
   * bucket. The ordinal of an integer key ({@code tinyint}, {@code smallint}, {@code int}, {@code
   * bigint}) is the key itself; of a {@code date} key, its days since 1970-01-01 ({@code
   * DATEDIFF_BIG(day, '19700101', k)}, negative before). Negative ordinals are floored ({@code -1}
   * is in bucket {@code -1} for any width); rows with a NULL key are excluded. Under the lock
   * timeout and {@code isolation}, never NOLOCK.
   *
   * @param schema source schema
   * @param table source table
   * @param keyColumn the key column
   * @param width the fine bucket's width in ordinals, at least 1
   * @param isolation the isolation level of the scan
   * @return fine bucket number to its rows and key sum, ascending, only non-empty buckets
   * @throws IllegalArgumentException when {@code width < 1}, or the column is not of an integer or
   *     {@code date} type
   * @throws CdcException for an unknown table or column
   */
  SortedMap<Long, KeyBucket> keyBuckets(
      String schema, String table, String keyColumn, long width, IsolationLevel isolation);

  /**
   * The table's rows, counted ({@code SELECT COUNT_BIG(*)}), under the lock timeout and {@code
   * isolation}: reconcile's tier 1 for a key that has no ordinal (a composite, string or other
   * key).
   *
   * @return the number of rows
   * @throws CdcException for an unknown table
   */
  long rowCount(String schema, String table, IsolationLevel isolation);

  /**
   * The table's row estimate from {@code EXEC sys.sp_spaceused @objname = ?} (its {@code rows}
   * column), never a count (the simulator, whose tables are small files, counts).
   *
   * @throws CdcException for an unknown table
   */
  long rowEstimate(String schema, String table);

  /**
   * The source server's current time, UTC, where the client knows it without asking the server: the
   * simulator's clock ({@code fake.FileBackedCdcClient}), whose history may lie anywhere in time.
   * The job measures {@code capture_lag_seconds} against it, so a simulated history reads as a live
   * one would.
   *
   * @return the source's time; empty (the default, and the T-SQL client's answer) when the job's
   *     own clock stands for it
   */
  default Optional<Instant> currentTime() {
    return Optional.empty();
  }

  /** Releases the connection or files. Never throws checked exceptions. */
  @Override
  void close();
}
