package org.lakecdc.transforms.reconcile;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.ValueConverter;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The keys in flight (docs/behaviour.md §11.2): keys whose change silver may not show yet, so that
 * a difference on them is {@code IN_FLIGHT}, not a mismatch:
 *
 * <ol>
 *   <li>keys of bronze's change rows (operations 1 to 4, not snapshot rows) with {@code _start_lsn}
 *       above {@code min(E, M)}, E silver's {@code applied_lsn} and M the {@code max_lsn} read
 *       before the source (bronze read at its latest version, files skipped by their {@code
 *       _start_lsn} statistics);
 *   <li>keys of the change-table rows the stream has not read: after bronze's position (domain
 *       {@code mssql_cdc.position}) up to the {@code max_lsn} read now, each capture instance read
 *       below the next one's start LSN (the pieces of docs/behaviour.md §3.3), key columns only.
 * </ol>
 *
 * A commit the capture job has not harvested yet is invisible to both; its difference is a MISMATCH
 * that clears on the next run. Keys are {@link KeyJson} text, so a NULL key is one key.
 */
public final class InFlight {
  private InFlight() {}

  /**
   * The keys in flight and, for a key with an ordinal, their ordinals.
   *
   * @param keys the keys as {@link KeyJson}
   * @param ordinals the non-NULL keys' ordinals (empty for a key without one)
   */
  public record Keys(Set<String> keys, Set<Long> ordinals) {}

  /**
   * Reads the keys in flight.
   *
   * @param client the source
   * @param tables the Delta access
   * @param spec the reconcile
   * @param keyTypes silver's key column types, in key order
   * @param appliedLsn silver's applied_lsn (E), or null before any apply
   * @param sourceLsn the max_lsn read before the source was read (M), or null when capture never
   *     wrote
   * @return the keys
   */
  public static Keys read(
      CdcClient client,
      DeltaTables tables,
      ReconcileSpec spec,
      List<OutputType> keyTypes,
      @Nullable Lsn appliedLsn,
      @Nullable Lsn sourceLsn) {
    Set<String> keys = new HashSet<>();
    Set<Long> ordinals = new HashSet<>();
    KeyOrdinal ordinal =
        spec.keys().size() == 1 ? KeyOrdinal.of(keyTypes.get(0)).orElse(null) : null;
    List<Object> values = new ArrayList<>(spec.keys().size());
    java.util.function.Consumer<List<Object>> add =
        key -> {
          keys.add(KeyJson.of(spec.keys(), key));
          if (ordinal != null && key.get(0) != null) {
            ordinals.add(ordinal.ordinal(key.get(0)));
          }
        };
    if (!tables.exists(spec.bronze())) {
      return new Keys(keys, ordinals);
    }
    Lsn e = appliedLsn == null ? Lsn.ZERO : appliedLsn;
    Lsn m = sourceLsn == null ? Lsn.ZERO : sourceLsn;
    String after = (e.compareTo(m) <= 0 ? e : m).toString();
    Predicate filter =
        new Predicate(">", new Column(MetadataColumns.START_LSN), Literal.ofString(after));
    try (io.delta.kernel.utils.CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(spec.bronze(), tables.version(spec.bronze()), filter)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        Object op = row.get(MetadataColumns.OPERATION);
        Object lsn = row.get(MetadataColumns.START_LSN);
        if (op == null
            || ((Number) op).intValue() == 0
            || lsn == null
            || ((String) lsn).compareTo(after) <= 0) {
          continue;
        }
        values.clear();
        for (String k : spec.keys()) {
          values.add(row.get(k));
        }
        add.accept(values);
      }
    } catch (IOException ex) {
      throw new UncheckedIOException("Cannot read Delta table " + spec.bronze(), ex);
    }
    Optional<StreamPosition> position =
        StreamPosition.fromJson(tables.domainMetadata(spec.bronze(), StreamPosition.BRONZE_DOMAIN));
    Optional<Lsn> now = client.maxLsn();
    if (position.isEmpty() || now.isEmpty() || now.get().compareTo(position.get().endLsn()) <= 0) {
      return new Keys(keys, ordinals);
    }
    Lsn from = client.incrementLsn(position.get().endLsn());
    List<CaptureInstance> instances = client.captureInstances(spec.captureInstance());
    for (int i = 0; i < instances.size(); i++) {
      Lsn start = instances.get(i).startLsn().orElse(Lsn.ZERO);
      Lsn pieceFrom = from.compareTo(start) >= 0 ? from : start;
      Lsn pieceTo = now.get();
      if (i + 1 < instances.size() && instances.get(i + 1).startLsn().isPresent()) {
        Lsn below = client.decrementLsn(instances.get(i + 1).startLsn().get());
        pieceTo = below.compareTo(pieceTo) < 0 ? below : pieceTo;
      }
      if (pieceFrom.compareTo(pieceTo) > 0) {
        continue;
      }
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(
              new ChangeQuery(instances.get(i).name(), pieceFrom, pieceTo, spec.keys(), false))) {
        while (rows.hasNext()) {
          ChangeRow row = rows.next();
          values.clear();
          for (int k = 0; k < spec.keys().size(); k++) {
            values.add(
                ValueConverter.toBeamValue(
                    row.values().get(k), keyTypes.get(k), spec.keys().get(k)));
          }
          add.accept(values);
        }
      }
    }
    return new Keys(keys, ordinals);
  }
}
