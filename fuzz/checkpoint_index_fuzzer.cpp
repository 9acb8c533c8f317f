//===- checkpoint_index_fuzzer.cpp - libFuzzer target: checkpoint index --===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to what --resume and --init-from read before any
// tensor data: a checkpoint's index.json (ckpt::loadIndex) when the first
// byte is even, a safetensors file's header (ckpt::indexOfSafetensors) when
// it is odd. Both read files, so each input is written to a directory of
// this process first. Built by bench/fuzz.sh (clang-22,
// -fsanitize=fuzzer,address), never by the default build.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string scratchDir() {
  static const std::string dir = [] {
    std::string d = "/tmp/piper-ckpt-fuzz-" + std::to_string(::getpid());
    ::mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    __builtin_trap();
  if (size)
    std::fwrite(data, 1, size, file);
  std::fclose(file);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace piper;
  if (size == 0)
    return 0;
  std::string dir = scratchDir();
  ckpt::Index index;
  std::string error;
  if (data[0] % 2 == 0) {
    writeFile(dir + "/index.json", data + 1, size - 1);
    (void)ckpt::loadIndex(dir, index, error);
  } else {
    writeFile(dir + "/weights.safetensors", data + 1, size - 1);
    (void)ckpt::indexOfSafetensors(dir + "/weights.safetensors", index, error);
  }
  return 0;
}
