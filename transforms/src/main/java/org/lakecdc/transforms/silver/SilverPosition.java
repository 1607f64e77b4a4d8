package org.lakecdc.transforms.silver;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Silver's position, committed in silver's domain metadata (domain {@value #DOMAIN}) atomically
 * with every silver commit: the truth after a crash. The control table's silver row is a copy,
 * repaired from it by the next call. JSON: {@code {"applied_lsn": ..., "snapshot_lsn": ...,
 * "open_snapshot_lsn": ..., "snapshot_wave": ..., "wave": n}}; LSNs as {@code 0x} + 20 upper-case
 * hex digits, nulls written as {@code null}.
 *
 * @param appliedLsn highest bronze LSN applied, or null before any
 * @param snapshotLsn LSN of the snapshot silver was last rebuilt from, or null
 * @param openSnapshotLsn S of the open chunked snapshot being applied wave by wave, or null when
 *     none is open (docs/behaviour.md §10.2 step 15)
 * @param snapshotWave the last wave of that snapshot applied, or null before its first
 * @param wave the sequence number of the silver commit that wrote this position: its transaction
 *     version for app id {@value #APP_ID}; the next commit uses {@code wave + 1}
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record SilverPosition(
    @JsonProperty("applied_lsn") @Nullable String appliedLsn,
    @JsonProperty("snapshot_lsn") @Nullable String snapshotLsn,
    @JsonProperty("open_snapshot_lsn") @Nullable String openSnapshotLsn,
    @JsonProperty("snapshot_wave") @Nullable Integer snapshotWave,
    @JsonProperty("wave") long wave) {

  /** The domain metadata domain of silver's position. */
  public static final String DOMAIN = "mssql_cdc.silver";

  /** The transaction app id of silver commits. */
  public static final String APP_ID = "lakecdc-silver";

  /** The position of a silver table nothing was applied to: all null, wave 0. */
  public static final SilverPosition NONE = new SilverPosition(null, null, null, null, 0);

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  /** The JSON text stored in the domain. */
  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write silver position " + this, e);
    }
  }

  /** The domain metadata map to commit: {@value #DOMAIN} to {@link #toJson()}. */
  public Map<String, String> domainMetadata() {
    return Map.of(DOMAIN, toJson());
  }

  /**
   * Reads {@link #toJson()}'s text; unknown fields are ignored (a newer build's).
   *
   * @throws IllegalArgumentException {@code Silver position '<json>' is not valid: <reason>}
   */
  public static SilverPosition fromJson(String json) {
    try {
      return JSON.readValue(json, SilverPosition.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "Silver position '" + json + "' is not valid: " + e.getOriginalMessage(), e);
    }
  }

  /**
   * The position recorded in a silver table's latest version.
   *
   * @param tables the Delta access
   * @param silver the silver table's path or URI
   * @return the position, or empty when no table exists or it has none (never applied to)
   */
  public static Optional<SilverPosition> read(DeltaTables tables, String silver) {
    if (!tables.exists(silver)) {
      return Optional.empty();
    }
    return tables.domainMetadata(silver, DOMAIN).map(SilverPosition::fromJson);
  }

  /** This position with the next wave number and the given applied and snapshot LSNs. */
  SilverPosition next(@Nullable String applied, @Nullable String snapshot) {
    return new SilverPosition(applied, snapshot, openSnapshotLsn, snapshotWave, wave + 1);
  }

  /** This position with the progress of an open chunked snapshot (both null when none is open). */
  SilverPosition withProgress(@Nullable String openSnapshot, @Nullable Integer wave) {
    return new SilverPosition(appliedLsn, snapshotLsn, openSnapshot, wave, this.wave);
  }
}
