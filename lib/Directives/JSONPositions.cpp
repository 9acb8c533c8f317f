//===- JSONPositions.cpp - Where each JSON directive starts ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "JSONPositions.h"

#include "llvm/ADT/StringExtras.h"

#include <string>

using namespace mlir::piper;

std::vector<JSONPosition>
mlir::piper::findDirectivePositions(llvm::StringRef json) {
  std::vector<JSONPosition> positions;
  JSONPosition here{1, 1};
  unsigned depth = 0;
  // Depth of the directive list's elements' container (0: not inside it).
  unsigned listDepth = 0;
  bool topIsObject = false, inString = false, escaped = false;
  bool expectElement = false;
  std::string text, key;
  for (char c : json) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"') {
        inString = false;
        // The last string at the top object's level is the key of what
        // follows it (a value string is replaced by the next key).
        if (depth == 1 && topIsObject)
          key = text;
      } else
        text += c;
    } else {
      if (expectElement && !llvm::isSpace(c)) {
        if (c != ']')
          positions.push_back(here);
        expectElement = false;
      }
      switch (c) {
      case '"':
        inString = true;
        text.clear();
        break;
      case '[':
      case '{':
        if (depth == 0)
          topIsObject = c == '{';
        if ((depth == 0 && c == '[') ||
            (depth == 1 && topIsObject && c == '[' && key == "directives")) {
          listDepth = depth + 1;
          expectElement = true;
        }
        ++depth;
        break;
      case ']':
      case '}':
        if (depth == listDepth)
          listDepth = 0;
        if (depth > 0)
          --depth;
        break;
      case ',':
        if (depth == listDepth && listDepth != 0)
          expectElement = true;
        break;
      default:
        break;
      }
    }
    if (c == '\n') {
      ++here.line;
      here.column = 1;
    } else {
      ++here.column;
    }
  }
  return positions;
}
