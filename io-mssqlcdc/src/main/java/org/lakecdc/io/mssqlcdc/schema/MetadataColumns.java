package org.lakecdc.io.mssqlcdc.schema;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Names of the columns this project adds to captured columns (docs/tables.md "Bronze"), in one
 * place. Change rows start with the six metadata columns, in this order: {@link #CAPTURE_INSTANCE},
 * {@link #START_LSN}, {@link #SEQVAL}, {@link #OPERATION}, {@link #COMMAND_ID} (absent when {@code
 * __$command_id} is not read), {@link #COMMIT_TS}. Bronze adds {@link #BATCH_ID}, {@link
 * #SNAPSHOT}, {@link #CHUNK} after the captured columns.
 */
public final class MetadataColumns {
  /** STRING: the capture instance the row was read from. */
  public static final String CAPTURE_INSTANCE = "_capture_instance";

  /** STRING: {@code __$start_lsn}, the commit LSN, canonical text. */
  public static final String START_LSN = "_start_lsn";

  /** STRING: {@code __$seqval}, canonical text; NULL on snapshot rows. */
  public static final String SEQVAL = "_seqval";

  /** INT: 0 snapshot, 1 delete, 2 insert, 3 update before-image, 4 update after-image. */
  public static final String OPERATION = "_operation";

  /** INT: {@code __$command_id}, numbered per capture instance; NULL on snapshot rows. */
  public static final String COMMAND_ID = "_command_id";

  /** TIMESTAMP_NTZ: commit time of {@code _start_lsn}, UTC. */
  public static final String COMMIT_TS = "_commit_ts";

  /** INT, bronze only: the batch that wrote the row; NULL on snapshot rows. */
  public static final String BATCH_ID = "_batch_id";

  /** STRING, bronze only: the snapshot LSN S of a snapshot row; NULL on change rows. */
  public static final String SNAPSHOT = "_snapshot";

  /** INT, bronze only: chunk number of a chunked-snapshot row; NULL otherwise. */
  public static final String CHUNK = "_chunk";

  /** The six metadata columns, in output order. */
  public static final List<String> METADATA =
      List.of(CAPTURE_INSTANCE, START_LSN, SEQVAL, OPERATION, COMMAND_ID, COMMIT_TS);

  /** Names no source column may take, lower case: the metadata and bronze columns. */
  public static final Set<String> RESERVED =
      List.of(
              CAPTURE_INSTANCE,
              START_LSN,
              SEQVAL,
              OPERATION,
              COMMAND_ID,
              COMMIT_TS,
              BATCH_ID,
              SNAPSHOT,
              CHUNK)
          .stream()
          .collect(Collectors.toUnmodifiableSet());

  /** Operation code of a snapshot row. */
  public static final int OP_SNAPSHOT = 0;

  /** Operation code of a delete ({@code __$operation = 1}). */
  public static final int OP_DELETE = 1;

  /** Operation code of an insert ({@code __$operation = 2}). */
  public static final int OP_INSERT = 2;

  /** Operation code of an update's before-image ({@code __$operation = 3}). */
  public static final int OP_UPDATE_BEFORE = 3;

  /** Operation code of an update's after-image ({@code __$operation = 4}). */
  public static final int OP_UPDATE_AFTER = 4;

  private MetadataColumns() {}

  /** True when {@code name} equals a reserved name, ignoring case. */
  public static boolean isReserved(String name) {
    return RESERVED.contains(name.toLowerCase(Locale.ROOT));
  }
}
