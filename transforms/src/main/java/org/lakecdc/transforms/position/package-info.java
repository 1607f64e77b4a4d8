/**
 * Where a target's stream stands: public API.
 *
 * <p>{@link org.lakecdc.transforms.position.StreamPosition} is the last processed commit LSN and
 * its commit time, the last batch number, the generation and the job's app id, stored as JSON in
 * Delta domain metadata (Delta protocol, "Domain Metadata") atomically with the commit that made it
 * true, so a restarted job resumes right after the last batch it committed. docs/tables.md, "Whose
 * position is it", describes which recorded position is a target's own.
 */
package org.lakecdc.transforms.position;
