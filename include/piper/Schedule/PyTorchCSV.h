//===- PyTorchCSV.h - torch.distributed.pipelining CSV files ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compute-only CSV of PyTorch's pipelining module: one row per rank, one
// action per cell (`2F0`, `7I0`, `7W0`, `1B2`, `(0F7;7B3)OVERLAP_F_B`), an
// empty cell for an idle step. Reading and writing keep each rank's sequence
// of actions; idle cells carry no dependency and are neither kept nor
// written (docs/Schedules.md, "Interchange with PyTorch").
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SCHEDULE_PYTORCHCSV_H
#define PIPER_SCHEDULE_PYTORCHCSV_H

#include "piper/Schedule/Schedule.h"

#include <string>
#include <string_view>

namespace piper::sched {

/// Reads a compute-only schedule CSV. Row r is rank r; the number of stages
/// and microbatches are the largest ones named plus one; each stage must
/// appear on one row only. Older PyTorch wrote the input gradient as `B` and
/// the weight gradient as a later `W`: a `B` whose (stage, microbatch) also
/// has a `W` is read as `I`, and `*usedBForInput` (if given) says whether
/// that happened. The result is not validated; call validate() for that.
Result<Schedule> readPyTorchCSV(std::string_view text,
                                bool *usedBForInput = nullptr);

/// How to spell a schedule as CSV.
struct CSVWriteOptions {
  /// Write input gradients as `B` (older PyTorch) instead of `I`.
  bool bForInput = false;
};

/// Writes one row per rank, no idle cells, `\n` after each row. Fails for
/// schedules of more than one chain (bidirectional DualPipe), which PyTorch's
/// single-pipeline stage numbering cannot express.
Result<std::string> writePyTorchCSV(const Schedule &schedule,
                                    const CSVWriteOptions &options = {});

} // namespace piper::sched

#endif // PIPER_SCHEDULE_PYTORCHCSV_H
