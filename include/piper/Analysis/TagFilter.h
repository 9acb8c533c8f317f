//===- TagFilter.h - Selecting chunks by their tags -------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Directives select the chunks they act on with tag filters, as in Piper:
// `{PP = 2, PASS = "BW", MB = "*"}`. A chunk's tags are those of its
// `piper.annotate` and of every enclosing one, plus `PASS` (its pass; F when
// none is set). The value "none" requires a tag to be absent (`EP = "none"`:
// dense work, outside expert blocks).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_ANALYSIS_TAGFILTER_H
#define PIPER_ANALYSIS_TAGFILTER_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

namespace mlir::piper {

/// A conjunction of tag constraints. Each key must be present on the chunk;
/// its value must equal the filter's, unless the filter's value is "*"; the
/// value "none" instead requires the key to be absent.
/// `PASS = "B"` also matches the BI and BW halves of a split backward.
/// The empty filter matches every chunk.
class TagFilter {
public:
  /// Checks `filter` and builds the matcher; on a malformed filter, emits
  /// through `emitError` and returns failure.
  static FailureOr<TagFilter> get(DictionaryAttr filter,
                                  function_ref<InFlightDiagnostic()> emitError);

  /// Whether a node or chunk with these tags and this pass matches.
  bool matches(ArrayRef<NamedAttribute> tags, PassKind pass) const;

  /// Whether the chunk `chunk` (with its enclosing tags) matches.
  bool matches(AnnotateOp chunk) const;

  /// Whether the DAG node `task` matches.
  bool matches(TaskOp task) const;

  /// Whether operand `operand` of `task` is used, inside the task's body, in
  /// a place whose tags match: the node's tags plus those of the chunks
  /// nested in the body around the use (an expert weight used in the body of
  /// `F{PP=0}` inside `{EP = 0}` has PP = 0 and EP = 0). Directives use this
  /// to act on part of a node (`replicate ... where {EP = "none"}`). A node
  /// without a body to look into matches by its own tags.
  bool matchesUse(TaskOp task, unsigned operand) const;

  /// The outermost chunks under `root` that match, in pre-order: a chunk
  /// nested in a matched chunk is part of it, not a separate match.
  SmallVector<AnnotateOp> collect(Operation *root) const;

  /// The DAG nodes under `root` that match, in IR order.
  SmallVector<TaskOp> collectNodes(Operation *root) const;

  DictionaryAttr getAttr() const { return filter; }

private:
  explicit TagFilter(DictionaryAttr filter) : filter(filter) {}
  DictionaryAttr filter;
};

} // namespace mlir::piper

#endif // PIPER_ANALYSIS_TAGFILTER_H
