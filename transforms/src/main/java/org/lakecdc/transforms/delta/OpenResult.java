package org.lakecdc.transforms.delta;

/**
 * The state of a table after {@link DeltaTables#createIfAbsent} or {@link DeltaTables#open}.
 *
 * @param path the table path as given
 * @param version the latest table version after creation and migrations
 * @param created whether this call created the table
 * @param schemaVersion the table's {@link TableProperties#SCHEMA_VERSION} afterwards
 * @param migrationsApplied how many migrations this call committed (0 when current or created)
 */
public record OpenResult(
    String path, long version, boolean created, int schemaVersion, int migrationsApplied) {}
