//===- EmitObject.h - LLVM dialect to a loadable shared object --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The last stage of the compile driver: a program lowered to the LLVM
// dialect becomes optimised LLVM IR, a host object and a shared object that
// the runtime loads. lib/Compile/EmitObject.cpp is the only file of the
// library that includes LLVM's codegen headers.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_EMITOBJECT_H
#define PIPER_COMPILE_EMITOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::piper {

/// Registers the LLVM IR translations of the builtin and LLVM dialects with
/// `context`: needed once before emitLLVMIR and emitObjectFile, which may
/// then run on several threads for distinct modules.
void registerObjectEmission(MLIRContext *context);

/// Translates `module` (LLVM dialect) to LLVM IR, optimises it at O2 for the
/// host and writes it to `os` as text. Only the packed entry points
/// (`piper_entry_*`) and shared kernels (`piper_shared_*`) stay external. The
/// phases are timed under `timing`.
LogicalResult emitLLVMIR(ModuleOp module, llvm::raw_ostream &os,
                         TimingScope &timing);

/// Translates `module` to LLVM IR, optimises it at O2 and writes a
/// position-independent host object file to `objectPath`, timing the
/// translation, O2 and codegen under `timing`. A non-empty `signature` is
/// defined as the NUL-terminated string piper-rt/plan_validate.h's
/// kSignatureSymbol, which piper-run compares with the plan's.
LogicalResult emitObjectFile(ModuleOp module, const std::string &objectPath,
                             TimingScope &timing,
                             llvm::StringRef signature = {});

/// Links `objectPath`, the objects of the plan's shared kernels
/// (ShareKernels.h) and the kernel library into the shared object
/// `sharedPath` (clang-22 -shared); `error` gets the linker's complaint.
LogicalResult linkSharedObject(const std::string &objectPath,
                               const std::string &sharedPath,
                               llvm::ArrayRef<std::string> sharedKernels,
                               std::string &error);

/// Links `objectPath` and the linker arguments `libraries` (none for a GPU
/// plan) into the shared object `sharedPath` with clang-22 -shared and lld.
LogicalResult linkSharedObjectWith(const std::string &objectPath,
                                   const std::string &sharedPath,
                                   llvm::ArrayRef<std::string> libraries,
                                   std::string &error);

} // namespace mlir::piper

#endif // PIPER_COMPILE_EMITOBJECT_H
