package org.lakecdc.transforms.history;

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
 * The history table's position, committed in its domain metadata (domain {@value #DOMAIN})
 * atomically with every history commit: the truth after a crash (the control table's row is a
 * copy). JSON {@code {"applied_lsn": ..., "snapshot_lsn": ..., "wave": n}}; LSNs as {@code 0x} + 20
 * upper-case hex digits.
 *
 * @param appliedLsn highest bronze LSN applied, or null before any
 * @param snapshotLsn LSN of the snapshot the history last opened versions from, or null
 * @param wave the sequence number of the commit that wrote this position: its transaction version
 *     for app id {@value #APP_ID}
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record HistoryPosition(
    @JsonProperty("applied_lsn") @Nullable String appliedLsn,
    @JsonProperty("snapshot_lsn") @Nullable String snapshotLsn,
    @JsonProperty("wave") long wave) {

  /** The domain metadata domain of the history's position. */
  public static final String DOMAIN = "mssql_cdc.history";

  /** The transaction app id of history commits. */
  public static final String APP_ID = "lakecdc-history";

  /** The position of a history table nothing was applied to. */
  public static final HistoryPosition NONE = new HistoryPosition(null, null, 0);

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  /** The JSON text stored in the domain. */
  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write history position " + this, e);
    }
  }

  /** The domain metadata map to commit: {@value #DOMAIN} to {@link #toJson()}. */
  public Map<String, String> domainMetadata() {
    return Map.of(DOMAIN, toJson());
  }

  /**
   * The position recorded in a history table's latest version.
   *
   * @param tables the Delta access
   * @param history the history table's path or URI
   * @return the position, or empty when there is no table or nothing was applied to it
   * @throws IllegalArgumentException when the stored text is not a position
   */
  public static Optional<HistoryPosition> read(DeltaTables tables, String history) {
    if (!tables.exists(history)) {
      return Optional.empty();
    }
    return tables
        .domainMetadata(history, DOMAIN)
        .map(
            json -> {
              try {
                return JSON.readValue(json, HistoryPosition.class);
              } catch (JsonProcessingException e) {
                throw new IllegalArgumentException(
                    "History position '" + json + "' is not valid: " + e.getOriginalMessage(), e);
              }
            });
  }

  /** This position with the next wave number and these LSNs. */
  HistoryPosition next(@Nullable String applied, @Nullable String snapshot) {
    return new HistoryPosition(applied, snapshot, wave + 1);
  }
}
