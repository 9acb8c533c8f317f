//===- GPUTarget.cpp - What --target=cuda changes in a plan ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/GPUTarget.h"
#include "piper/Compile/EmitObject.h"

using namespace mlir;

LogicalResult mlir::piper::linkGPUSharedObject(const std::string &objectPath,
                                               const std::string &sharedPath,
                                               std::string &error) {
  return linkSharedObjectWith(objectPath, sharedPath, {}, error);
}
