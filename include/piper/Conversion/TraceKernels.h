//===- TraceKernels.h - Per-kernel trace spans (opt-in) ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `piper-compile --trace-kernels` records on the module the kinds of op it
// traces (kTraceKernelsAttrName); `--piper-trace-kernels` then brackets every
// such op of the launched bodies with piper_trace_kernel_begin/end(kind),
// kind being the index in that list, and plan.json lists the names
// (`kernel_kinds`), so that `piper-run --trace` records one span per op
// inside each launch's span. A kind is what the simulator counts an op as:
// kernelKindOf (piper/Analysis/KernelKind.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_TRACEKERNELS_H
#define PIPER_CONVERSION_TRACEKERNELS_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::piper {

/// On the module: the kernel kinds traced, an array of strings in the
/// order plan.json's `kernel_kinds` lists them. Absent: nothing is traced.
constexpr llvm::StringLiteral kTraceKernelsAttrName =
    "piper_plan.trace_kernels";

/// The sorted kinds of every traceable op in the module's private
/// functions (the bodies launches call).
std::vector<std::string> collectKernelKinds(ModuleOp module);

/// Sets kTraceKernelsAttrName to every kind of collectKernelKinds.
void markKernelTracing(ModuleOp module);

} // namespace mlir::piper

#endif // PIPER_CONVERSION_TRACEKERNELS_H
