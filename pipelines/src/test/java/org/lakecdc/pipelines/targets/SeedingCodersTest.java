package org.lakecdc.pipelines.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PValue;
import org.junit.jupiter.api.Test;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileActionCoder;
import org.lakecdc.transforms.delta.ScanFile;

/**
 * A seed copy's pipeline carries its data files and add actions in coders of their own: no step
 * encodes a {@link ScanFile} or a {@link DataFileAction} with Java serialization.
 */
class SeedingCodersTest {
  /** Stands for the copy's DoFn: the steps are only built, never run. */
  private static final class NoCopy extends DoFn<ScanFile, DataFileAction> {
    @ProcessElement
    public void process() {}
  }

  /** The coder and its components, depth first. */
  private static List<Coder<?>> withComponents(Coder<?> coder) {
    List<Coder<?>> all = new ArrayList<>();
    all.add(coder);
    for (Coder<?> component : coder.getCoderArguments()) {
      all.addAll(withComponents(component));
    }
    return all;
  }

  @Test
  void noStepOfTheCopyJavaSerializesAFileOrAnAddAction() {
    Pipeline pipeline = Pipeline.create();
    PCollection<KV<String, DataFileAction>> actions =
        Seeding.copiedFiles(
            pipeline,
            "/lake/copy",
            List.of(new ScanFile("/lake/copy", 3, "{\"add\":{}}")),
            new NoCopy(),
            "/lake/bronze");
    assertEquals(KvCoder.of(StringUtf8Coder.of(), DataFileActionCoder.of()), actions.getCoder());
    List<String> serialized = new ArrayList<>();
    pipeline.traverseTopologically(
        new Pipeline.PipelineVisitor.Defaults() {
          @Override
          public void visitValue(PValue value, TransformHierarchy.Node producer) {
            if (!(value instanceof PCollection<?> collection)) {
              return;
            }
            for (Coder<?> coder : withComponents(collection.getCoder())) {
              if (coder instanceof SerializableCoder<?> java
                  && (java.getRecordType().equals(ScanFile.class)
                      || java.getRecordType().equals(DataFileAction.class))) {
                serialized.add(producer.getFullName() + ": " + coder);
              }
            }
          }
        });
    assertEquals(List.of(), serialized, "steps that Java-serialize a file or an add action");
  }
}
