//===- TagFilter.cpp - Selecting chunks by their tags ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Analysis/TagFilter.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::piper;

static constexpr StringLiteral kWildcard = "*";
/// "Tag absent": the filter `{EP = "none"}` selects dense work, outside
/// expert blocks. Reserved, so no tag can match the string "none" itself.
static constexpr StringLiteral kAbsent = "none";

FailureOr<TagFilter>
TagFilter::get(DictionaryAttr filter,
               function_ref<InFlightDiagnostic()> emitError) {
  for (NamedAttribute entry : filter) {
    StringRef key = entry.getName().getValue();
    bool wellFormed = !key.empty() && llvm::isUpper(key.front()) &&
                      llvm::all_of(key, [](char c) {
                        return llvm::isUpper(c) || llvm::isDigit(c) || c == '_';
                      });
    if (!wellFormed) {
      emitError() << "filter key '" << key
                  << "' is malformed: tags are upper-case identifiers such "
                     "as PP, EP, PASS or MB";
      return failure();
    }
    Attribute value = entry.getValue();
    if (auto string = dyn_cast<StringAttr>(value)) {
      if (key == "PASS" && string.getValue() != kWildcard &&
          !symbolizePassKind(string.getValue())) {
        emitError() << "filter PASS = \"" << string.getValue()
                    << "\" names no pass; expected F, B, BI, BW, UPD or \"*\"";
        return failure();
      }
      continue;
    }
    auto integer = dyn_cast<IntegerAttr>(value);
    if (!integer || !integer.getType().isSignlessInteger() ||
        integer.getType().isInteger(1) || integer.getValue().isNegative()) {
      emitError() << "filter value of '" << key
                  << "' must be a non-negative integer, a string or \"*\"";
      return failure();
    }
    if (key == "PASS") {
      emitError() << "filter PASS takes a pass name such as \"BW\"";
      return failure();
    }
  }
  return TagFilter(filter);
}

/// Tag values compare by value: `PP = 1` matches whatever integer width the
/// chunk's tag was written with.
static bool sameValue(Attribute a, Attribute b) {
  auto ia = dyn_cast<IntegerAttr>(a), ib = dyn_cast<IntegerAttr>(b);
  if (ia && ib)
    return ia.getInt() == ib.getInt();
  return a == b;
}

bool TagFilter::matches(AnnotateOp chunk) const {
  return matches(chunk.getAllTags(), chunk.getPass().value_or(PassKind::F));
}

bool TagFilter::matches(TaskOp task) const {
  return matches(task.getTags().getValue(), task.getPass());
}

bool TagFilter::matches(ArrayRef<NamedAttribute> tags, PassKind pass) const {
  for (NamedAttribute entry : filter) {
    StringRef key = entry.getName().getValue();
    auto string = dyn_cast<StringAttr>(entry.getValue());
    bool wildcard = string && string.getValue() == kWildcard;
    bool absent = string && string.getValue() == kAbsent;
    if (key == "PASS") {
      if (wildcard)
        continue;
      PassKind wanted = *symbolizePassKind(string.getValue());
      bool backward = pass == PassKind::BI || pass == PassKind::BW;
      if (pass != wanted && !(wanted == PassKind::B && backward))
        return false;
      continue;
    }
    auto it = llvm::find_if(tags, [&](NamedAttribute tag) {
      return tag.getName() == entry.getName();
    });
    if (absent) {
      if (it != tags.end())
        return false;
      continue;
    }
    if (it == tags.end())
      return false;
    if (!wildcard && !sameValue(it->getValue(), entry.getValue()))
      return false;
  }
  return true;
}

bool TagFilter::matchesUse(TaskOp task, unsigned operand) const {
  auto callee = SymbolTable::lookupNearestSymbolFrom<FunctionOpInterface>(
      task, task.getCalleeAttr());
  if (!callee || callee.isExternal() ||
      operand >= callee.getFunctionBody().getNumArguments())
    return matches(task);
  BlockArgument arg = callee.getFunctionBody().getArgument(operand);
  return llvm::any_of(arg.getUsers(), [&](Operation *user) {
    SmallVector<NamedAttribute> tags(task.getTags().getValue());
    if (auto chunk = user->getParentOfType<AnnotateOp>())
      llvm::append_range(tags, chunk.getAllTags());
    return matches(tags, task.getPass());
  });
}

SmallVector<TaskOp> TagFilter::collectNodes(Operation *root) const {
  SmallVector<TaskOp> found;
  root->walk([&](TaskOp task) {
    if (matches(task))
      found.push_back(task);
  });
  return found;
}

SmallVector<AnnotateOp> TagFilter::collect(Operation *root) const {
  SmallVector<AnnotateOp> found;
  root->walk<WalkOrder::PreOrder>([&](AnnotateOp chunk) {
    if (!matches(chunk))
      return WalkResult::advance();
    found.push_back(chunk);
    return WalkResult::skip();
  });
  return found;
}
