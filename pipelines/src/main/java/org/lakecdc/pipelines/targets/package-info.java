/**
 * A target's lifecycle as the launcher drives it before and around the stream: the run's
 * configuration ({@link org.lakecdc.pipelines.targets.JobConfig}, open it first), the plan per
 * table ({@link org.lakecdc.pipelines.targets.TablePlan}), its identity and position ({@link
 * org.lakecdc.pipelines.targets.TargetIdentity}), recovery and repairs ({@link
 * org.lakecdc.pipelines.targets.Recovery}), the bootstrap snapshot ({@link
 * org.lakecdc.pipelines.targets.Bootstrap}) or a seed ({@link
 * org.lakecdc.pipelines.targets.Seeding}), re-snapshots after data loss ({@link
 * org.lakecdc.pipelines.targets.Resnapshot}), chunked snapshots and their waves ({@link
 * org.lakecdc.pipelines.targets.ChunkedSnapshot}, {@link
 * org.lakecdc.pipelines.targets.ChunkBackfill}, their progress lines: {@link
 * org.lakecdc.pipelines.targets.WaveProgress}), the plan of a target's silver table and the run's
 * counters. docs/tables.md describes the tables, docs/behaviour.md §2, §6 and §9 the rules. Depends
 * on {@code options} and {@code cli}.
 */
package org.lakecdc.pipelines.targets;
