//===- Program.h - A role's compiled program --------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The shared object of a role (plan_abi.h: what a plan defines). Loading it
// binds its undefined plan ABI symbols to the ones piper-run exports.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_PROGRAM_H
#define PIPER_TOOLS_PIPER_RUN_PROGRAM_H

#include "piper-rt/plan_manifest.h"

#include <dlfcn.h>
#include <string>

namespace piper::run {

/// The role's compiled program: its entry point and the kernels' error hooks.
struct Program {
  void (*entry)(void **) = nullptr;
  const char *(*lastError)() = nullptr;
  void (*clearError)() = nullptr;
  /// Sets the threads of the plan's BLAS calls and parallel loops.
  void (*setThreads)(int) = nullptr;

  bool load(const std::string &directory, const plan::Role &role,
            std::string &error) {
    std::string path = directory;
    if (!path.empty() && path.back() != '/')
      path += '/';
    path += role.object;
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      error = "cannot load " + path + ": " + dlerror();
      return false;
    }
    entry =
        reinterpret_cast<void (*)(void **)>(dlsym(handle, role.entry.c_str()));
    lastError = reinterpret_cast<const char *(*)()>(
        dlsym(handle, "piper_kernels_last_error"));
    clearError = reinterpret_cast<void (*)()>(
        dlsym(handle, "piper_kernels_clear_error"));
    setThreads =
        reinterpret_cast<void (*)(int)>(dlsym(handle, "piper_k_set_threads"));
    if (!entry)
      error = path + " has no entry point '" + role.entry + "'";
    return entry != nullptr;
  }
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_PROGRAM_H
