//===- GPUTarget.h - What --target=cuda changes in a plan -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A GPU plan object carries its kernels as an embedded cubin/fatbin and
// calls only the plan ABI (runtime/include/piper-rt/plan_abi.h and
// plan_abi_gpu.h), which piper-run's CUDA backend defines. So it links no
// kernel library, OpenBLAS or libomp: the GPU machine has none of them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_GPUTARGET_H
#define PIPER_COMPILE_GPUTARGET_H

#include "mlir/Support/LogicalResult.h"

#include <string>

namespace mlir::piper {

/// Links the GPU plan object `objectPath` into the shared object
/// `sharedPath` (clang-22 -shared, nothing else linked in: the plan ABI
/// stays undefined until piper-run loads it); `error` gets the linker's
/// complaint.
LogicalResult linkGPUSharedObject(const std::string &objectPath,
                                  const std::string &sharedPath,
                                  std::string &error);

} // namespace mlir::piper

#endif // PIPER_COMPILE_GPUTARGET_H
