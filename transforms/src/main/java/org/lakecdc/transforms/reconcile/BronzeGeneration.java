package org.lakecdc.transforms.reconcile;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.SilverPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * Which bronze generation a reconciled silver table reflects (docs/tables.md "Generations and
 * re-snapshots"): bronze's stream position (domain {@value StreamPosition#BRONZE_DOMAIN}) names the
 * generation n and its app id ({@code <appId>.g<n>}, {@code <appId>} for generation 0); for n ≥ 1
 * the facts table's {@code resnapshot} row of that app id and bronze (or, while a chunked
 * re-snapshot is still being read, its {@code snapshot_open} row of kind {@code resnapshot} and
 * generation n) gives the re-snapshot's S; silver reflects generation n once its own {@code
 * snapshot_lsn} (domain {@value SilverPosition#DOMAIN}) is S or later, i.e. silver was rebuilt from
 * that snapshot.
 *
 * @param generation bronze's generation, 0 until a re-snapshot started generation 1
 * @param appId the generation's app id (bronze's transaction app id)
 * @param resnapshotLsn S of generation {@code generation}'s re-snapshot; null for generation 0, or
 *     when the facts table has no row of it
 * @param complete whether that re-snapshot is complete (its {@code resnapshot} row is written);
 *     true for generation 0
 * @param silverSnapshotLsn silver's {@code snapshot_lsn} at the version reconciled: the snapshot it
 *     was last rebuilt from, or null before any
 */
public record BronzeGeneration(
    int generation,
    String appId,
    @Nullable Lsn resnapshotLsn,
    boolean complete,
    @Nullable Lsn silverSnapshotLsn) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Whether silver reflects this generation: always for generation 0; for a later one, when
   * silver's {@code snapshot_lsn} is at or after the re-snapshot's S.
   */
  public boolean silverReflects() {
    if (generation == 0) {
      return true;
    }
    return resnapshotLsn != null
        && silverSnapshotLsn != null
        && !silverSnapshotLsn.isBefore(resnapshotLsn);
  }

  /**
   * The summary's words: {@code bronze generation 1 (app id dbo_orders.g1, re-snapshot at S = 0x…);
   * silver rebuilt from it}, or for generation 0 {@code bronze generation 0 (app id dbo_orders)}.
   */
  public String describe() {
    StringBuilder s = new StringBuilder("bronze generation ").append(generation);
    s.append(" (app id ").append(appId);
    if (generation > 0) {
      if (resnapshotLsn == null) {
        s.append(", no re-snapshot row in the facts table");
      } else {
        s.append(", re-snapshot at S = ").append(resnapshotLsn);
        if (!complete) {
          s.append(", still open");
        }
      }
    }
    s.append(')');
    if (generation > 0) {
      s.append(
          silverReflects()
              ? "; silver rebuilt from it"
              : "; silver not rebuilt from it yet (its snapshot_lsn "
                  + (silverSnapshotLsn == null ? "none" : silverSnapshotLsn.toString())
                  + ")");
    }
    return s.toString();
  }

  /**
   * Reads bronze's generation at bronze's latest version and silver's snapshot at {@code
   * silverVersion}.
   *
   * @param tables the Delta access
   * @param bronze the bronze table (the facts rows' {@code target}, spelled as the job was given
   *     it)
   * @param facts the facts table, or null for none (then a re-snapshot's S is unknown)
   * @param silver the silver table
   * @param silverVersion the silver version reconciled
   * @return the generation; empty when bronze does not exist or holds no stream position
   * @throws UncheckedIOException when the facts table cannot be read
   * @throws IllegalArgumentException when bronze's position is not valid JSON
   */
  public static Optional<BronzeGeneration> read(
      DeltaTables tables,
      String bronze,
      @Nullable String facts,
      String silver,
      long silverVersion) {
    if (!tables.exists(bronze)) {
      return Optional.empty();
    }
    Optional<StreamPosition> position =
        StreamPosition.fromJson(tables.domainMetadata(bronze, StreamPosition.BRONZE_DOMAIN));
    if (position.isEmpty()) {
      return Optional.empty();
    }
    int generation = position.get().generation();
    String appId = position.get().appId();
    Lsn resnapshot = null;
    Lsn open = null;
    if (generation > 0 && facts != null && tables.exists(facts)) {
      Predicate events =
          new Predicate(
              "OR",
              new Predicate(
                  "=",
                  new Column(FactsTable.EVENT),
                  Literal.ofString(ChunkedSnapshotFacts.EVENT_RESNAPSHOT)),
              new Predicate(
                  "=",
                  new Column(FactsTable.EVENT),
                  Literal.ofString(ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN)));
      try (CloseableIterator<Map<String, Object>> rows =
          tables.scanAtVersion(facts, tables.version(facts), events)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          if (!bronze.equals(row.get(FactsTable.TARGET))) {
            continue;
          }
          if (ChunkedSnapshotFacts.EVENT_RESNAPSHOT.equals(row.get(FactsTable.EVENT))) {
            if (appId.equals(row.get(FactsTable.APP_ID))
                && row.get(FactsTable.MAX_LSN) instanceof String max) {
              resnapshot = later(resnapshot, Lsn.parse(max));
            }
          } else {
            JsonNode d = detail(row.get(FactsTable.DETAIL));
            if (d != null
                && ChunkedSnapshotFacts.KIND_RESNAPSHOT.equals(d.path("kind").asText())
                && d.path("generation").asInt(-1) == generation
                && row.get(FactsTable.MIN_LSN) instanceof String s) {
              open = later(open, Lsn.parse(s));
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + facts, e);
      }
    }
    Lsn silverSnapshot =
        tables
            .domainMetadataAt(silver, silverVersion, SilverPosition.DOMAIN)
            .map(SilverPosition::fromJson)
            .map(SilverPosition::snapshotLsn)
            .map(Lsn::parse)
            .orElse(null);
    return Optional.of(
        new BronzeGeneration(
            generation,
            appId,
            resnapshot != null ? resnapshot : open,
            generation == 0 || resnapshot != null,
            silverSnapshot));
  }

  private static Lsn later(@Nullable Lsn a, Lsn b) {
    return a == null || b.isAfter(a) ? b : a;
  }

  /** A facts row's detail as JSON, or null when it is none. */
  private static @Nullable JsonNode detail(@Nullable Object detail) {
    if (!(detail instanceof String text)) {
      return null;
    }
    try {
      return JSON.readTree(text);
    } catch (JsonProcessingException e) {
      // Free text, not a snapshot detail: the row names no generation.
      return null;
    }
  }
}
