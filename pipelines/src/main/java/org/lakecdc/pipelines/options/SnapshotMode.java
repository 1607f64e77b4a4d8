package org.lakecdc.pipelines.options;

/**
 * How a new target's bootstrap snapshot is taken ({@code --snapshot}): {@link #WHOLE}, one read and
 * one bronze commit before the stream starts, or {@link #CHUNKED}, key-range chunks beside the
 * stream. On the command line in any case ({@code whole}, {@code chunked}).
 */
public enum SnapshotMode {
  /** The whole table in one read under one LSN, one bronze commit. */
  WHOLE,
  /** Key-range chunks, each stamped with its own LSN, one bronze commit each. */
  CHUNKED
}
