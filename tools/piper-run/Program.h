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
#include "piper-rt/plan_validate.h"

#include <dlfcn.h>
#include <string>

namespace piper::run {

/// The role's compiled program: its entry point and the kernels' error hooks.
struct Program {
  void (*entry)(void **) = nullptr;
  /// The forward-only evaluation entry (plan.json's role "eval"), or null
  /// for a plan compiled without one.
  void (*evalEntry)(void **) = nullptr;
  /// The sampling entry (role "sample"), or null.
  void (*sampleEntry)(void **) = nullptr;
  const char *(*lastError)() = nullptr;
  void (*clearError)() = nullptr;
  /// Sets the threads of the plan's BLAS calls and parallel loops.
  void (*setThreads)(int) = nullptr;

  /// Loads `role`'s object from `directory` after verifying its size and
  /// checksum, then checks that its entry point is its own and that it was
  /// compiled for the inputs and outputs `manifest` describes
  /// (plan_validate.h).
  bool load(const std::string &directory, const plan::Manifest &manifest,
            const plan::Role &role, std::string &error) {
    if (!plan::verifyRoleObject(directory, role, error))
      return false;
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
    // dlsym also searches the object's dependencies (libc's malloc): the
    // entry must lie in the object that defines the signature.
    const char *signature =
        static_cast<const char *>(dlsym(handle, plan::kSignatureSymbol));
    if (!signature) {
      error = path + " has no " + plan::kSignatureSymbol +
              " (not a plan object, or an older one; recompile the plan)";
      return false;
    }
    Dl_info entryInfo, signatureInfo;
    if (!entry || !dladdr(reinterpret_cast<void *>(entry), &entryInfo) ||
        !dladdr(signature, &signatureInfo) ||
        entryInfo.dli_fbase != signatureInfo.dli_fbase) {
      error = path + " has no entry point '" + role.entry + "'";
      return false;
    }
    // The evaluation and sampling entries, in the same object.
    for (auto [described, fn] : {std::pair{&role.eval, &evalEntry},
                                 std::pair{&role.sample, &sampleEntry}}) {
      if (!*described)
        continue;
      *fn = reinterpret_cast<void (*)(void **)>(
          dlsym(handle, (*described)->entry.c_str()));
      Dl_info info;
      if (!*fn || !dladdr(reinterpret_cast<void *>(*fn), &info) ||
          info.dli_fbase != signatureInfo.dli_fbase) {
        error = path + " has no entry point '" + (*described)->entry + "'";
        return false;
      }
    }
    std::string expected = plan::roleSignature(manifest, role);
    if (expected != signature) {
      error = path + " " + plan::signatureDifference(signature, expected);
      return false;
    }
    return true;
  }
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_PROGRAM_H
