package org.lakecdc.transforms.silver;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.Schema.Field;
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * Hand-written bronze for silver tests (docs/scenarios.md §11): {@code lsn(n)} = {@code 0x} + n as
 * 20 hex digits, {@code ts(n)} = T0 + n minutes, T0 = 2026-09-30 09:00 UTC; {@link #change} writes
 * one transaction's rows at {@code lsn(n)} with {@code _seqval = lsn(n*100+j)} and {@code
 * _command_id = j} (an update's 4 shares its 3's j); {@link #whole} writes a whole snapshot's op-0
 * rows with {@code _snapshot = _start_lsn = lsn(n)}. Captured columns: {@code order_id INT, status
 * STRING}.
 */
public final class BronzeLog {
  public static final LocalDateTime T0 = LocalDateTime.of(2026, 9, 30, 9, 0);
  public static final String INSTANCE = "dbo_orders";

  /** One change row of a transaction: op, key, status; {@code sameCommand} shares the last j. */
  public record Op(
      int operation, @Nullable Object key, @Nullable String status, boolean sameCommand) {}

  public static Op ins(@Nullable Object key, String status) {
    return new Op(2, key, status, false);
  }

  public static Op del(@Nullable Object key) {
    return new Op(1, key, "gone", false);
  }

  /** An update keeping its key: 3 (old image) then 4 (new image), one command. */
  public static Op[] upd(@Nullable Integer key, String before, String after) {
    return new Op[] {new Op(3, key, before, false), new Op(4, key, after, true)};
  }

  /** An update moving the row to another key: 3 of the old key, 4 of the new, one command. */
  public static Op[] move(Integer from, Integer to, String status) {
    return new Op[] {new Op(3, from, status, false), new Op(4, to, status, true)};
  }

  public final DeltaTables tables;
  public final String bronze;
  public final String facts;
  public final String control;
  public final Schema schema;
  private String instance = INSTANCE;

  public BronzeLog(
      DeltaTables tables, String bronze, String facts, String control, boolean commandId) {
    this(tables, bronze, facts, control, commandId, FieldType.INT32);
  }

  /** With {@code order_id} of another type (Java values of {@link DeltaTables#scan}). */
  public BronzeLog(
      DeltaTables tables,
      String bronze,
      String facts,
      String control,
      boolean commandId,
      FieldType keyType) {
    this.tables = tables;
    this.bronze = bronze;
    this.facts = facts;
    this.control = control;
    List<Field> fields = new ArrayList<>(ChangeSchema.metadataFields(commandId));
    fields.add(Field.nullable("order_id", keyType));
    fields.add(Field.nullable("status", FieldType.STRING));
    Schema change = Schema.of(fields.toArray(Field[]::new));
    this.schema = BronzeTable.schema(change);
    tables.createIfAbsent(bronze, BronzeTable.definition(change));
    tables.createIfAbsent(facts, FactsTable.definition());
  }

  public static String lsn(long n) {
    return "0x" + String.format(Locale.ROOT, "%020X", n);
  }

  public static LocalDateTime ts(long n) {
    return T0.plusMinutes(n);
  }

  /** Rows written from now on are of this capture instance. */
  public BronzeLog instance(String name) {
    this.instance = name;
    return this;
  }

  /** One source transaction at {@code lsn(n)}. */
  public void change(long n, Object... ops) {
    List<Op> flat = new ArrayList<>();
    for (Object op : ops) {
      if (op instanceof Op[] pair) {
        flat.addAll(Arrays.asList(pair));
      } else {
        flat.add((Op) op);
      }
    }
    List<Row> rows = new ArrayList<>();
    int j = 0;
    for (Op op : flat) {
      if (!op.sameCommand()) {
        j++;
      }
      rows.add(
          row(lsn(n), lsn(n * 100 + j), op.operation(), j, ts(n), op.key(), op.status(), null));
    }
    append(rows);
  }

  /** A whole snapshot at {@code lsn(n)}: op-0 rows of key/status pairs. */
  public void whole(long n, Object... keyStatus) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < keyStatus.length; i += 2) {
      rows.add(row(lsn(n), null, 0, null, ts(n), keyStatus[i], (String) keyStatus[i + 1], lsn(n)));
    }
    append(rows);
  }

  /**
   * One chunk of the chunked snapshot at {@code lsn(s)} read at stamp {@code lsn(stamp)}: op-0 rows
   * of key/status pairs with {@code _snapshot = lsn(s)}, {@code _start_lsn = lsn(stamp)}, {@code
   * _chunk = chunk}, {@code _seqval}/{@code _command_id} NULL (one bronze commit).
   */
  public void chunk(long s, long stamp, int chunk, Object... keyStatus) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < keyStatus.length; i += 2) {
      rows.add(
          row(
              lsn(stamp),
              null,
              0,
              null,
              ts(stamp),
              keyStatus[i],
              (String) keyStatus[i + 1],
              lsn(s),
              chunk));
    }
    append(rows);
  }

  /** Bronze's verdict after a batch ending at {@code lsn(n)} (hour granularity). */
  public LocalDateTime verdict(long n) {
    return new Finalization(tables, control, java.time.Clock.systemUTC())
        .advance(bronze, Lsn.parse(lsn(n)), ts(n).toInstant(ZoneOffset.UTC), Granularity.HOUR);
  }

  /** A facts event row ({@code bootstrap} or {@code resnapshot}) at {@code max_lsn = lsn(n)}. */
  public void fact(String event, long n, String target) {
    Row row =
        FactsTable.row()
            .set(FactsTable.APP_ID, "test")
            .set(FactsTable.EVENT, event)
            .set(FactsTable.MAX_LSN, lsn(n))
            .set(FactsTable.MIN_LSN, lsn(n))
            .set(FactsTable.TARGET, target)
            .build();
    tables.append(facts, FactsTable.SCHEMA, List.of(row), null, 0, Map.of());
  }

  public void fact(String event, long n) {
    fact(event, n, bronze);
  }

  /**
   * A chunked snapshot's completion row ({@code bootstrap} or {@code resnapshot}) at S = {@code
   * lsn(s)}, with S's commit time {@code ts(s)} as {@code end_commit_ts}, as the committer writes
   * it.
   */
  public void completion(String event, long s) {
    Row row =
        FactsTable.row()
            .set(FactsTable.APP_ID, "test")
            .set(FactsTable.EVENT, event)
            .set(FactsTable.MAX_LSN, lsn(s))
            .set(FactsTable.MIN_LSN, lsn(s))
            .set(FactsTable.END_LSN, lsn(s))
            .set(FactsTable.END_COMMIT_TS, ts(s).toInstant(ZoneOffset.UTC))
            .set(FactsTable.TARGET, bronze)
            .build();
    tables.append(facts, FactsTable.SCHEMA, List.of(row), null, 0, Map.of());
  }

  private Row row(
      String startLsn,
      @Nullable String seqval,
      int operation,
      @Nullable Integer commandId,
      LocalDateTime commitTs,
      @Nullable Object key,
      @Nullable String status,
      @Nullable String snapshot) {
    return row(startLsn, seqval, operation, commandId, commitTs, key, status, snapshot, null);
  }

  private Row row(
      String startLsn,
      @Nullable String seqval,
      int operation,
      @Nullable Integer commandId,
      LocalDateTime commitTs,
      @Nullable Object key,
      @Nullable String status,
      @Nullable String snapshot,
      @Nullable Integer chunk) {
    Row.Builder b = Row.withSchema(schema);
    for (Field field : schema.getFields()) {
      b.addValue(
          switch (field.getName()) {
            case "_capture_instance" -> instance;
            case "_start_lsn" -> startLsn;
            case "_seqval" -> seqval;
            case "_operation" -> operation;
            case "_command_id" -> operation == 0 ? null : commandId;
            case "_commit_ts" -> commitTs;
            case "order_id" -> key;
            case "status" -> status;
            case "_snapshot" -> snapshot;
            case "_chunk" -> chunk;
            default -> null;
          });
    }
    return b.build();
  }

  private void append(List<Row> rows) {
    if (rows.isEmpty()) {
      return;
    }
    tables.append(bronze, schema, rows, null, 0, Map.of());
  }

  /** Silver's rows as "key:status" texts ("null" for a NULL key), sorted. */
  public static List<String> rows(DeltaTables tables, String silver) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(silver)) {
      rows.add(row.get("order_id") + ":" + row.get("status"));
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }

  /** Silver's rows with their _start_lsn, "key:status@lsn", sorted. */
  public static List<String> rowsWithLsn(DeltaTables tables, String silver) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(silver)) {
      rows.add(
          row.get("order_id")
              + ":"
              + row.get("status")
              + "@"
              + Objects.toString(row.get("_start_lsn")));
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }
}
