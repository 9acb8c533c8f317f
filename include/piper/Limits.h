//===- Limits.h - Upper bounds on sizes a user can type ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every count or size that reaches the compiler from a user (a flag, a JSON
// field, an attribute in hand-written IR) is checked against one of these
// bounds before any work or allocation depends on it, so that a typo such as
// `into 4294967296 microbatches` is one located error instead of minutes of
// work and gigabytes of memory. The numbers and why each was chosen are in
// docs/Limits.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIMITS_H
#define PIPER_LIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::piper {

/// Microbatches one split may make (transform.piper.split, JSON "n"). Every
/// microbatch copies the split nodes and the lowering grows faster than
/// linearly with them: a PP2 tiny MLP compiles in 77 s at 256 microbatches
/// and does not finish in 300 s at 1024.
inline constexpr int64_t kMaxMicrobatches = 256;

/// Devices on one mesh axis, and on the whole mesh (the product of its axes).
inline constexpr int64_t kMaxMeshDevices = int64_t(1) << 20;

/// Layers piper-gen builds: building is quadratic in the layer count (1024
/// layers take about 3.5 s and 750 MB).
inline constexpr int64_t kMaxGenLayers = 1024;

/// Any other width piper-gen and piper-interp accept (hidden, ffn, vocab, seq,
/// batch, experts, ...): 2^24, well above every real model's.
inline constexpr int64_t kMaxDimension = int64_t(1) << 24;

/// The deepest nesting of arrays and objects in a JSON input. llvm::json
/// parses recursively; 50,000 levels overflow the stack.
inline constexpr unsigned kMaxJSONDepth = 256;

/// The first place `text` nests arrays and objects deeper than
/// kMaxJSONDepth, as llvm::json reports errors: "[line:column, byte=offset]:
/// Nesting deeper than 256 levels". std::nullopt when it does not. Strings
/// are skipped, so brackets inside them do not count.
inline std::optional<std::string> checkJSONDepth(llvm::StringRef text) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONDepth)
        return ("[" + llvm::Twine(line) + ":" + llvm::Twine(i - lineStart) +
                ", byte=" + llvm::Twine(i) + "]: Nesting deeper than " +
                llvm::Twine(kMaxJSONDepth) + " levels")
            .str();
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

} // namespace mlir::piper

#endif // PIPER_LIMITS_H
