//===- plan_manifest_fuzzer.cpp - libFuzzer target: plan.json loading ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the runtime's plan.json reader and validation
// (readManifest, validateManifest), then does with an accepted manifest what
// piper-run does before it loads an object: the role of every rank, the loss
// ranks, each role's signature, and writing it back. Built by bench/fuzz.sh
// (clang-22, -fsanitize=fuzzer,address), never by the default build.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_manifest.h"
#include "piper-rt/plan_validate.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace piper::plan;
  std::string text(reinterpret_cast<const char *>(data), size);
  Manifest manifest;
  std::string error;
  if (!readManifest(text, "fuzz/plan.json", manifest, error))
    return 0;
  for (const Role &role : manifest.roles)
    (void)roleSignature(manifest, role);
  // rolesOfRanks visits every device: bounded by the validated mesh size,
  // but kept small here so that one input stays fast.
  if (manifest.mesh.numDevices() <= 4096) {
    std::vector<const Role *> roleOf;
    if (manifest.rolesOfRanks(roleOf, error))
      (void)manifest.lossRanks(roleOf);
  }
  Manifest back;
  if (!readManifest(writeManifest(manifest), "fuzz/again.json", back, error) ||
      !(back == manifest))
    __builtin_trap(); // what the reader accepts, the writer must round-trip
  return 0;
}
