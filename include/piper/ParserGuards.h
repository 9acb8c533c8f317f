//===- ParserGuards.h - Inputs that crash upstream MLIR's parser -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's own parser (Debian's release libraries, not Piper's code) crashes
// on some inputs instead of reporting an error; docs/Limits.md lists them
// ("MLIR parser crashes") with reproducers in fuzz/crashes-upstream/. Piper
// cannot fix them, but its tools can look for them before they parse and
// stop with one located line instead of a segfault. The scan skips comments
// and string literals, so a file that only mentions such text still parses.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_PARSERGUARDS_H
#define PIPER_PARSERGUARDS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <optional>

namespace mlir::piper {

/// A place in the text that would crash MLIR's parser, and why.
struct UpstreamParserCrash {
  size_t offset;
  const char *message;
};

namespace detail {

inline bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
}

inline size_t skipSpaces(llvm::StringRef text, size_t i) {
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' ||
                             text[i] == '\n' || text[i] == '\r'))
    ++i;
  return i;
}

/// Whether the keyword `word` starts at `i`, as a whole token.
inline bool isTokenAt(llvm::StringRef text, size_t i, llvm::StringRef word) {
  if (!text.substr(i).starts_with(word))
    return false;
  if (i > 0 && isIdentifierChar(text[i - 1]))
    return false;
  size_t end = i + word.size();
  return end >= text.size() || !isIdentifierChar(text[end]);
}

} // namespace detail

/// The first known upstream parser crash in `text`, if any:
/// - `array<index ...>`: a dense array of `index` elements (MLIR 22 segfaults
///   in the attribute parser; it rejects every other non-integer,
///   non-float element type with "expected integer or float type").
inline std::optional<UpstreamParserCrash>
findUpstreamParserCrash(llvm::StringRef text) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // a string literal, with backslash escapes
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        return std::nullopt;
      continue;
    }
    if (c != 'a' || !detail::isTokenAt(text, i, "array"))
      continue;
    size_t j = detail::skipSpaces(text, i + 5);
    if (j >= text.size() || text[j] != '<')
      continue;
    j = detail::skipSpaces(text, j + 1);
    if (detail::isTokenAt(text, j, "index"))
      return UpstreamParserCrash{
          i, "a dense array of 'index' elements crashes MLIR 22's parser; "
             "use an integer element type such as i64 (array<i64: ...>)"};
  }
  return std::nullopt;
}

/// Fails with one located error (through `context`'s diagnostic handlers)
/// when the main buffer of `sourceMgr` holds a known upstream parser crash;
/// call it before parseSourceFile.
inline LogicalResult
checkUpstreamParserCrashes(const llvm::SourceMgr &sourceMgr,
                           MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<UpstreamParserCrash> crash =
      findUpstreamParserCrash(buffer->getBuffer());
  if (!crash)
    return success();
  auto [line, column] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(buffer->getBufferStart() + crash->offset));
  emitError(
      FileLineColLoc::get(context, buffer->getBufferIdentifier(), line, column))
      << crash->message;
  return failure();
}

} // namespace mlir::piper

#endif // PIPER_PARSERGUARDS_H
