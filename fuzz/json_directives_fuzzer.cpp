//===- json_directives_fuzzer.cpp - libFuzzer target: JSON directives ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to translateJSONDirectives (piper-directives and
// piper-compile --directives=X.json): the depth check, llvm::json's parser
// and every directive's field checks. Built by bench/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "piper/Directives/JSONDirectives.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<std::string> script =
      mlir::piper::translateJSONDirectives(text, "fuzz.json");
  if (!script)
    llvm::consumeError(script.takeError());
  return 0;
}
