//===- ChunkUtils.h - Grouping generated ops into chunks --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Passes that derive work from forward chunks (autodiff's BI/BW, the
// optimizer's UPD) emit ops flat at the end of the function, remembering for
// each op the forward chunk path it belongs to, then call `formChunks` to
// wrap them in `piper.annotate` regions mirroring the forward nesting.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_CHUNKUTILS_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_CHUNKUTILS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::piper {

/// The integer tag `key` of a tag or device dictionary (`PP = 2`), if it
/// has one; booleans are not integer tags.
std::optional<int64_t> getIntTag(DictionaryAttr dict, StringRef key);

/// The forward chunks enclosing an op, outermost first.
using ChunkPath = SmallVector<AnnotateOp>;

/// Narrows `common` to its longest common prefix with `path`; an empty
/// `common` becomes `path`. Folding all paths of a value's uses gives the
/// innermost chunk containing all of them.
void narrowToCommonPrefix(std::optional<ChunkPath> &common,
                          ArrayRef<AnnotateOp> path);

/// Wraps `ops` (contiguous in one block, in order) in `piper.annotate` with
/// the tags of `forward` and `pass`; values used after the new chunk are
/// yielded and their outside uses redirected to its results.
AnnotateOp wrapInChunk(ArrayRef<Operation *> ops, AnnotateOp forward,
                       PassKind pass);

/// Wraps `ops` (contiguous, in order, at one nesting level `depth`) into
/// chunks following `paths`: maximal runs of ops whose path has the same
/// chunk at `depth` are split by `passOf` (parts in increasing PassKind
/// order, each part kept in order), wrapped, and recursed into. Ops in no
/// chunk at all get their pass as the `piper.pass` attribute. `passOf`
/// must never put an op before one it uses: BI before BW is safe because
/// BI never uses BW.
void formChunks(ArrayRef<Operation *> ops,
                const DenseMap<Operation *, ChunkPath> &paths,
                function_ref<PassKind(Operation *)> passOf, unsigned depth = 0);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_CHUNKUTILS_H
