package org.lakecdc.transforms.delta;

import java.util.List;
import java.util.OptionalLong;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One commit of a table's Delta log ({@code _delta_log/<version>.json}), summarized from its
 * actions ({@link DeltaTables#history}).
 *
 * @param version the table version the commit created
 * @param timestampMillis {@code commitInfo.timestamp}, milliseconds since the epoch (UTC); 0 when
 *     absent
 * @param operation {@code commitInfo.operation}, e.g. {@code CREATE TABLE}, {@code WRITE}; null
 *     when absent
 * @param txnAppId the {@code txn} action's app id, or null when the commit has none
 * @param txnVersion the {@code txn} action's version, empty when the commit has none
 * @param filesAdded the number of {@code add} actions
 * @param filesRemoved the number of {@code remove} actions
 * @param metadataChanged whether the commit has a {@code metaData} action
 * @param domains the domains of its {@code domainMetadata} actions, in log order
 */
public record CommitSummary(
    long version,
    long timestampMillis,
    @Nullable String operation,
    @Nullable String txnAppId,
    OptionalLong txnVersion,
    int filesAdded,
    int filesRemoved,
    boolean metadataChanged,
    List<String> domains) {
  /**
   * Copies the domain list.
   *
   * @param version the version
   * @param timestampMillis the commit time
   * @param operation the operation
   * @param txnAppId the txn app id
   * @param txnVersion the txn version
   * @param filesAdded add actions
   * @param filesRemoved remove actions
   * @param metadataChanged whether metadata changed
   * @param domains the domains
   */
  public CommitSummary {
    domains = List.copyOf(domains);
  }
}
