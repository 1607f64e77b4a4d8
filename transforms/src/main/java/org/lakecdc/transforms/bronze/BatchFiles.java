package org.lakecdc.transforms.bronze;

import java.io.Serializable;
import java.util.List;
import org.lakecdc.transforms.delta.DataFileAction;

/**
 * A batch's bronze data files, written on a worker and not yet committed, with the batch's stats.
 *
 * @param batchId the batch number
 * @param files the data files and their serialized add actions
 * @param stats what the batch's rows hold
 */
public record BatchFiles(long batchId, List<DataFileAction> files, BatchStats stats)
    implements Serializable {
  public BatchFiles {
    files = List.copyOf(files);
  }
}
