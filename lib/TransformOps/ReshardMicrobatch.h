//===- ReshardMicrobatch.h - ZeRO-2/3 reduce-scatter per microbatch -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_TRANSFORMOPS_RESHARDMICROBATCH_H
#define PIPER_LIB_TRANSFORMOPS_RESHARDMICROBATCH_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::piper {

/// Under ZeRO-2/3 a gradient accumulated over microbatches is
/// reduce-scattered contribution by contribution: each microbatch's
/// gradient gets its own reduce-scatter, issued as soon as its weight
/// gradient exists, and the accumulator sums the shards. So no full-size
/// gradient accumulator lives across microbatches; the full gradient of one
/// microbatch lives from its weight-gradient node to its reduce-scatter.
/// `gradCollectives` (the once-per-step reduce-scatters `replicate` made)
/// and `created` are updated in place: the step collectives that fed an
/// accumulator are erased and replaced by the per-microbatch ones.
void reshardPerMicrobatch(RewriterBase &rewriter,
                          SmallVectorImpl<CollectiveOp> &gradCollectives,
                          SmallVectorImpl<Operation *> &created);

/// Splits each microbatch's weight-gradient node (pass BW) whose gradients
/// are all accumulated and reduce-scattered at the step into one node per
/// bucket of outputs: consecutive gradients up to `bucketBytes` (one
/// gradient per bucket when 0 or when a gradient alone exceeds it). Each
/// bucket's node calls a copy of the body that computes only its gradients,
/// so a bucket's full-size gradients exist only until their reduce-scatter:
/// the next bucket's node runs while they are communicated. The first
/// bucket keeps the node's name; the others are named `<name>.b<k>`.
void splitWeightGradientBuckets(RewriterBase &rewriter, DAGOp dag,
                                int64_t bucketBytes);

} // namespace mlir::piper

#endif // PIPER_LIB_TRANSFORMOPS_RESHARDMICROBATCH_H
