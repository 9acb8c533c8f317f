//===- GPUTarget.cpp - What --target=cuda changes in a plan ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/GPUTarget.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Program.h"

#include <vector>

using namespace mlir;

LogicalResult mlir::piper::linkGPUSharedObject(const std::string &objectPath,
                                               const std::string &sharedPath,
                                               std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName(PIPER_LINKER);
  if (!cc) {
    error = "cannot find the linker driver '" PIPER_LINKER "' on PATH";
    return failure();
  }
  std::vector<std::string> args = {*cc,        "-shared",  "-fuse-ld=lld",
                                   "-o",       sharedPath,
                                   objectPath};
  llvm::SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, argRefs, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = "linking " + sharedPath + " failed (" + *cc + " exited with " +
            std::to_string(rc) + (message.empty() ? "" : ": " + message) + ")";
    return failure();
  }
  return success();
}
