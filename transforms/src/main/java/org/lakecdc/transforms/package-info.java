/**
 * The Delta side of lakecdc: what the jobs write and how. This root package holds only {@link
 * org.lakecdc.transforms.Counts}, the one way counts are worded in messages; the work is in the
 * subpackages, whose public types are the library's API for writing CDC into Delta Lake: {@code
 * delta} (the table layer over Delta Kernel), {@code bronze}, {@code facts} and {@code
 * finalization} (the tables), {@code position} (where a stream stands) and {@code write} (the Beam
 * transforms that write a change stream exactly once). docs/architecture.md shows how they fit,
 * docs/tables.md describes every table.
 */
package org.lakecdc.transforms;
