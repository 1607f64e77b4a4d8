package org.lakecdc.transforms.delta;

import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;

/**
 * One identified append of a committer round ({@link DeltaTables#appendRound}): a few rows tagged
 * with the transaction identifier {@code (appId, txnVersion)} and the domain metadata that commit
 * atomically with them.
 *
 * @param rowSchema the schema of the rows (the same for every append of a round)
 * @param rows the rows (a few: held until the round is written)
 * @param appId the transaction's app id, distinct within a round
 * @param txnVersion the transaction version
 * @param domainMetadata domain name to configuration, set by no other append of the round
 */
public record GroupedAppend(
    Schema rowSchema,
    List<Row> rows,
    String appId,
    long txnVersion,
    Map<String, String> domainMetadata) {
  /** Copies the rows and the domain metadata. */
  public GroupedAppend {
    rows = List.copyOf(rows);
    domainMetadata = Map.copyOf(domainMetadata);
  }
}
