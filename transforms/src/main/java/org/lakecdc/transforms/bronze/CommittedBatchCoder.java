package org.lakecdc.transforms.bronze;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.time.LocalDateTime;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;

/**
 * The coder of {@link CommittedBatch}: its fields in order, times as ISO-8601 text, the stats as
 * their JSON ({@link BatchStats#toJson()}).
 */
public final class CommittedBatchCoder extends AtomicCoder<CommittedBatch> {
  private static final CommittedBatchCoder INSTANCE = new CommittedBatchCoder();
  private static final NullableCoder<String> TEXT = NullableCoder.of(StringUtf8Coder.of());

  private CommittedBatchCoder() {}

  /** The coder. */
  public static CommittedBatchCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(CommittedBatch value, OutputStream out) throws IOException {
    VarLongCoder.of().encode(value.batchId(), out);
    StringUtf8Coder.of().encode(value.stats().toJson(), out);
    StringUtf8Coder.of().encode(value.endLsn(), out);
    StringUtf8Coder.of().encode(value.endCommitTime().toString(), out);
    VarLongCoder.of().encode(value.bronzeVersion(), out);
    BooleanCoder.of().encode(value.skipped(), out);
    TEXT.encode(value.verdict() == null ? null : value.verdict().toString(), out);
    VarLongCoder.of().encode(value.bytesWritten(), out);
    StringUtf8Coder.of().encode(value.appId(), out);
    TEXT.encode(value.failure(), out);
  }

  @Override
  public CommittedBatch decode(InputStream in) throws IOException {
    long batchId = VarLongCoder.of().decode(in);
    BatchStats stats = BatchStats.fromJson(StringUtf8Coder.of().decode(in));
    String endLsn = StringUtf8Coder.of().decode(in);
    Instant endCommitTime = Instant.parse(StringUtf8Coder.of().decode(in));
    long bronzeVersion = VarLongCoder.of().decode(in);
    boolean skipped = BooleanCoder.of().decode(in);
    String verdict = TEXT.decode(in);
    long bytes = VarLongCoder.of().decode(in);
    String appId = StringUtf8Coder.of().decode(in);
    String failure = TEXT.decode(in);
    return new CommittedBatch(
        batchId,
        stats,
        endLsn,
        endCommitTime,
        bronzeVersion,
        skipped,
        verdict == null ? null : LocalDateTime.parse(verdict),
        bytes,
        appId,
        failure);
  }

  @Override
  public void verifyDeterministic() {}
}
