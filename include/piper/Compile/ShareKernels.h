//===- ShareKernels.h - One copy of each kernel for all programs -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The programs of a plan are lowered separately (one object per role), but
// most of their kernels are the same: a qwen3_1b PP8 plan's eight programs
// hold 1,116 kernel functions after O2 of which 266 are distinct, and O2
// and codegen of those copies were most of the compile time. Here, after
// every program is lowered to the LLVM dialect, each kernel (an outlined
// linalg op, `piper_kernel*`, or a generated attention kernel,
// `piper_attention*`) is keyed by its text with its name left out. The
// first of each key moves into a shared module under a name derived from
// the key (`piper_shared_<hash>`), hidden, and every program calls it
// through a declaration. The shared module is compiled once and linked
// into every role's object, so plans keep one self-contained object per
// role and the runtime sees no difference.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_SHAREKERNELS_H
#define PIPER_COMPILE_SHAREKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::piper {

/// The prefix of a kernel shared by the programs of a plan. Symbols with it
/// stay external through internalisation (EmitObject.cpp) so that each
/// role's object resolves them from the shared kernels' object.
constexpr llvm::StringLiteral kSharedKernelPrefix = "piper_shared_";

/// Moves the kernels of `programs` (each lowered to the LLVM dialect) into
/// `parts` new modules (about equal in size, for compiling in parallel),
/// leaving declarations in the programs. A kernel that refers to anything
/// defined in its program (another function, a global) stays where it is.
/// Returns the shared modules; none when there is nothing to share.
SmallVector<OwningOpRef<ModuleOp>> shareKernels(ArrayRef<ModuleOp> programs,
                                                unsigned parts);

} // namespace mlir::piper

#endif // PIPER_COMPILE_SHAREKERNELS_H
