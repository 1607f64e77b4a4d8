/**
 * Chunked snapshots' state (docs/behaviour.md §6.7): it lives only in facts event rows ({@code
 * snapshot_open}, {@code snapshot_plan}, {@code snapshot_chunk}, then {@code bootstrap} or {@code
 * resnapshot}) and in bronze's {@code _snapshot}/{@code _chunk} columns, never in a state table of
 * its own. This package writes and reads those rows.
 */
package org.lakecdc.transforms.snapshot;
