//===- PiperDistributionRules.cpp - How each op splits over a mesh axis ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The `DistributionOpInterface` rules of the ops that are not plain
// elementwise ops (those take the interface's defaults).
//
// Local types: tensor parallelism (Megatron) splits a linear's weight by
// column (its output channels) or by row (its input channels). Split
// channels stay the last dim through reshapes that regroup leading dims,
// attention runs on its share of the heads, elementwise ops and optimizer
// updates follow their operands; softmax, the norms and the losses reduce
// over channels and run on whole operands only. A VJP's gradients are held
// as their primals are.
//
// Costs: forward costs are the textbook ones (a [M, K] x [K, N] product is
// 2MKN FLOPs). A VJP computes the cotangent of one operand; its cost is
// that operand's share of the op's backward, chosen so that the shares of
// a matrix product add up to twice its forward (the 6N FLOPs per token of
// training), and elementwise ops cost twice their forward per operand. The
// reference kernels recompute from the primals; real kernels read what the
// forward saved, which is what is counted. Every figure is computed at the
// types given, so a device's share is the same method at its local types.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::detail;

namespace {

/// Whether one device holds less of dim `d` of `local` than of `global`.
bool isDimSplit(Type global, Type local, unsigned d) {
  auto g = dyn_cast<RankedTensorType>(global);
  auto l = dyn_cast<RankedTensorType>(local);
  return g && l && d < g.getRank() && d < l.getRank() &&
         g.getDimSize(d) != l.getDimSize(d);
}

/// A matrix product's VJP (matmul): the two operand gradients are a
/// product each (the size of the forward's), the bias gradient a row sum.
OpCount getProductVJPCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  Type cotangent = query.localCotangents().front();
  if (query.wrt.front() < 2)
    c.matrixFlops =
        2 * getNumElements(cotangent) * getLastDim(query.localOperands.front());
  else
    c.vectorFlops = getNumElements(cotangent);
  return c;
}

/// A linear's product, forward or either operand gradient: two FLOPs per
/// token and weight element a device holds. Tensor parallelism splits the
/// weight, never the tokens, so the weight says the share even where a
/// device's activations are not known to be split.
double getLinearProductFlops(const DistributionQuery &query) {
  Type x = query.localOperands[0];
  double tokens = getNumElements(x) / getLastDim(x);
  return 2 * tokens * getNumElements(query.localOperands[1]);
}

/// Grouped-query attention's local form: q split by heads and k, v by
/// key/value heads, the same number of ways (the group of query heads that
/// reads a key/value head stays on one device).
LogicalResult inferGroupedAttentionLocalForm(const DistributionQuery &query,
                                             LocalForm &form,
                                             DistributionErrorFn error) {
  auto heads = query.attrs.getAs<IntegerAttr>("num_heads");
  auto kvHeads = query.attrs.getAs<IntegerAttr>("num_kv_heads");
  if (query.localOperands[1] != query.localOperands[2]) {
    if (error)
      error() << "would mix " << query.localOperands[1] << " and "
              << query.localOperands[2];
    return failure();
  }
  int64_t factor = getChannelSplit(query.operands[0], query.localOperands[0]);
  int64_t kvFactor = getChannelSplit(query.operands[1], query.localOperands[1]);
  if (!heads || factor < 1 || factor != kvFactor ||
      heads.getInt() % factor != 0 || kvHeads.getInt() % factor != 0) {
    if (error)
      error() << "has " << (heads ? heads.getInt() : 0) << " query and "
              << kvHeads.getInt()
              << " key/value heads, which do not split alike over "
              << query.localOperands[0] << " and " << query.localOperands[1];
    return failure();
  }
  form.resultTypes.push_back(query.localOperands[0]);
  MLIRContext *ctx = heads.getContext();
  form.attrs.push_back(NamedAttribute(
      StringAttr::get(ctx, "num_heads"),
      IntegerAttr::get(heads.getType(), heads.getInt() / factor)));
  form.attrs.push_back(NamedAttribute(
      StringAttr::get(ctx, "num_kv_heads"),
      IntegerAttr::get(kvHeads.getType(), kvHeads.getInt() / factor)));
  return success();
}

/// Data movement (gathers, scatters, transposes): bytes, no FLOPs.
OpCount getMovementCost(const DistributionQuery &query) {
  return getKernelBytes(query);
}

} // namespace

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferLocalForm(const DistributionQuery &query,
                                       LocalForm &form, DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

OpCount MatmulOp::getCost(const DistributionQuery &query) {
  if (query.isVJP())
    return getProductVJPCost(query);
  OpCount c = getKernelBytes(query);
  c.matrixFlops = 2 * getNumElements(query.localResult(0)) *
                  getLastDim(query.localOperands.front());
  return c;
}

LogicalResult LinearOp::inferLocalForm(const DistributionQuery &query,
                                       LocalForm &form,
                                       DistributionErrorFn error) {
  if (query.isVJP())
    return inferFollowPrimalsLocalForm(query, form);
  // The output's channels follow w's; the input's must meet w's rows.
  auto x = dyn_cast<RankedTensorType>(query.localOperands[0]);
  auto w = dyn_cast<RankedTensorType>(query.localOperands[1]);
  if (!x || !w || x.getRank() == 0 || w.getRank() != 2 ||
      x.getShape().back() != w.getDimSize(0)) {
    if (error)
      error() << "multiplies " << query.localOperands[0] << " by "
              << query.localOperands[1];
    return failure();
  }
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getShape().back();
  form.resultTypes.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

OpCount LinearOp::getCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  if (query.isVJP() && query.wrt.front() >= 2) {
    // The bias gradient: a sum of the cotangent's rows.
    c.vectorFlops = getNumElements(query.localCotangents().front());
    return c;
  }
  c.matrixFlops = getLinearProductFlops(query);
  if (!query.isVJP() && query.operands.size() > 2)
    c.vectorFlops = getNumElements(query.localResult(0));
  return c;
}

std::optional<unsigned> LinearOp::getWeightOperand() { return 1; }

LogicalResult LinearOp::verifyWeightSplit(const DistributionQuery &query,
                                          DistributionErrorFn error) {
  // A bias on split outputs would be added on every device of a partial
  // sum, or need splitting of its own.
  if (query.numPrimals <= 2)
    return success();
  if (error)
    error() << "has a bias; tensor parallelism supports linears without one";
  return failure();
}

SmallVector<bool> LinearOp::getPartialSums(const DistributionQuery &query) {
  // A product over split input channels (w's rows: the row-parallel
  // output) or, in the VJP, over split output channels (w's columns: the
  // input gradient of a column-parallel linear) sums a share of the terms.
  Type w = query.operands[1], local = query.localOperands[1];
  if (!query.isVJP())
    return {isDimSplit(w, local, 0)};
  SmallVector<bool> partial;
  for (int64_t wrt : query.wrt)
    partial.push_back(wrt == 0 && isDimSplit(w, local, 1));
  return partial;
}

SmallVector<unsigned>
LinearOp::getTokenGatheredOperands(const DistributionQuery &query) {
  // The forward of a column-parallel linear reads every token of x; its
  // weight gradient too. A row-parallel linear's output cotangent is split
  // by tokens (BI, BW).
  Type w = query.operands[1], local = query.localOperands[1];
  bool column = isDimSplit(w, local, 1), row = isDimSplit(w, local, 0);
  if (!query.isVJP())
    return column ? SmallVector<unsigned>{0} : SmallVector<unsigned>{};
  if (row)
    return {query.numPrimals};
  if (column && llvm::is_contained(query.wrt, 1))
    return {0};
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise and row-wise ops
//===----------------------------------------------------------------------===//

bool AddOp::propagatesPartialSums() { return true; }
double GeluOp::getFlopsPerElement() { return 8; }
double GeluErfOp::getFlopsPerElement() { return 8; }
double SiluOp::getFlopsPerElement() { return 4; }
double SwigluOp::getFlopsPerElement() { return 5; }

LogicalResult SoftmaxOp::inferLocalForm(const DistributionQuery &query,
                                        LocalForm &form, DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}
double SoftmaxOp::getFlopsPerElement() { return 5; }

LogicalResult RmsNormOp::inferLocalForm(const DistributionQuery &query,
                                        LocalForm &form,
                                        DistributionErrorFn error) {
  if (query.isVJP())
    return inferFollowPrimalsLocalForm(query, form);
  // A grouped norm (q/k norm per head) reduces within groups of w's size:
  // x may be split by channels in whole groups, with w whole.
  auto x = dyn_cast<RankedTensorType>(query.operands[0]);
  auto w = dyn_cast<RankedTensorType>(query.operands[1]);
  if (!x || !w || w.getRank() != 1 || x.getRank() == 0 ||
      w.getDimSize(0) == x.getShape().back() ||
      query.localOperands[1] != query.operands[1])
    return failure();
  int64_t factor = getChannelSplit(query.operands[0], query.localOperands[0]);
  auto local = cast<RankedTensorType>(query.localOperands[0]);
  if (factor < 1 || local.getShape().back() % w.getDimSize(0) != 0) {
    if (error)
      error() << "normalises groups of " << w.getDimSize(0)
              << " channels, which " << query.localOperands[0]
              << " does not hold whole";
    return failure();
  }
  form.resultTypes.push_back(local);
  return success();
}
double RmsNormOp::getFlopsPerElement() { return 4; }

SmallVector<bool> RmsNormOp::getPartialSums(const DistributionQuery &query) {
  // A grouped norm's weight gradient sums over every group; a device
  // holding some of the groups (heads) sums a share.
  SmallVector<bool> partial;
  if (!query.isVJP())
    return partial;
  for (int64_t wrt : query.wrt)
    partial.push_back(
        wrt == 1 &&
        isDimSplit(query.operands[0], query.localOperands[0],
                   cast<RankedTensorType>(query.operands[0]).getRank() - 1));
  return partial;
}

LogicalResult LayerNormOp::inferLocalForm(const DistributionQuery &query,
                                          LocalForm &form,
                                          DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}
double LayerNormOp::getFlopsPerElement() { return 8; }

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferLocalForm(const DistributionQuery &query,
                                          LocalForm &form,
                                          DistributionErrorFn error) {
  auto heads =
      query.attrs ? query.attrs.getAs<IntegerAttr>("num_heads") : IntegerAttr();
  if (query.isVJP()) {
    // The backward runs on the forward's share of the heads.
    (void)inferFollowPrimalsLocalForm(query, form);
    int64_t factor = getChannelSplit(query.operands[0], query.localOperands[0]);
    if (factor <= 1 || !heads)
      return success();
    if (heads.getInt() % factor != 0) {
      if (error)
        error() << "differentiates 'piper.attention' with " << heads.getInt()
                << " heads, which do not split " << factor << " ways";
      return failure();
    }
    form.attrs.push_back(NamedAttribute(
        StringAttr::get(heads.getContext(), "num_heads"),
        IntegerAttr::get(heads.getType(), heads.getInt() / factor)));
    if (auto kv = query.attrs.getAs<IntegerAttr>("num_kv_heads")) {
      if (kv.getInt() % factor != 0) {
        if (error)
          error() << "differentiates 'piper.attention' with " << kv.getInt()
                  << " key/value heads, which do not split " << factor
                  << " ways";
        return failure();
      }
      form.attrs.push_back(
          NamedAttribute(StringAttr::get(kv.getContext(), "num_kv_heads"),
                         IntegerAttr::get(kv.getType(), kv.getInt() / factor)));
    }
    return success();
  }
  auto kvHeads = query.attrs ? query.attrs.getAs<IntegerAttr>("num_kv_heads")
                             : IntegerAttr();
  if (kvHeads)
    return inferGroupedAttentionLocalForm(query, form, error);
  if (failed(inferCommonLocalForm(query, 3, form, error)))
    return failure();
  Type type = form.resultTypes.front();
  int64_t factor = getChannelSplit(query.operands[0], type);
  if (!heads || factor < 1 || heads.getInt() % factor != 0) {
    if (error)
      error() << "has " << (heads ? heads.getInt() : 0)
              << " heads, which do not split over its operands " << type;
    return failure();
  }
  form.attrs.push_back(NamedAttribute(
      StringAttr::get(heads.getContext(), "num_heads"),
      IntegerAttr::get(heads.getType(), heads.getInt() / factor)));
  return success();
}

OpCount AttentionOp::getCost(const DistributionQuery &query) {
  if (query.isVJP()) {
    // FlashAttention's backward is about 2.5x its forward; a third each.
    OpCount forward = getCost(query.getForward());
    OpCount c = getKernelBytes(query);
    c.matrixFlops = 2.5 / 3 * forward.matrixFlops;
    c.vectorFlops = 2.5 / 3 * forward.vectorFlops;
    return c;
  }
  // Causal: QK^T and PV over half the S x S scores, 2 FLOPs a product. The
  // softmax work (counted once for all heads) is shared as the heads are.
  OpCount c = getKernelBytes(query);
  Type q = query.localOperands[0];
  double b = getDim(q, 0), s = getDim(q, 1), d = getDim(q, 2);
  double heads = getDim(q, 2) / getDim(query.operands[0], 2);
  c.matrixFlops = 2 * b * s * s * d;
  c.vectorFlops = 2.5 * b * s * s * heads;
  return c;
}

int64_t AttentionOp::getChannelGroups(DictionaryAttr attrs) {
  // Key/value heads divide the query heads: a split of those splits both.
  auto kv = attrs ? attrs.getAs<IntegerAttr>("num_kv_heads") : IntegerAttr();
  if (kv)
    return kv.getInt();
  auto heads = attrs ? attrs.getAs<IntegerAttr>("num_heads") : IntegerAttr();
  return heads ? heads.getInt() : 0;
}

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::inferLocalForm(const DistributionQuery &query,
                                     LocalForm &form,
                                     DistributionErrorFn error) {
  // Positions are the index along dim 1, so that dim stays whole; batches
  // and whole heads of channels may be split.
  auto x = dyn_cast<RankedTensorType>(query.operands[0]);
  auto local = dyn_cast<RankedTensorType>(query.localOperands[0]);
  auto headDim =
      query.attrs ? query.attrs.getAs<IntegerAttr>("head_dim") : IntegerAttr();
  if (!x || !local || !headDim || x.getRank() != 3 || local.getRank() != 3 ||
      x.getDimSize(1) != local.getDimSize(1) ||
      local.getDimSize(2) % headDim.getInt() != 0) {
    if (error)
      error() << "rotates heads of " << (headDim ? headDim.getInt() : 0)
              << " channels at positions along dim 1, which "
              << query.localOperands[0] << " does not hold whole";
    return failure();
  }
  form.resultTypes.push_back(local);
  return success();
}
double RopeOp::getFlopsPerElement() { return 3; }

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferLocalForm(const DistributionQuery &query,
                                        LocalForm &form,
                                        DistributionErrorFn error) {
  if (query.isVJP())
    return inferFollowPrimalsLocalForm(query, form);
  // Only leading dims may be regrouped: the split channels stay the last
  // dim, whole, so every device keeps the same channels of every row.
  auto in = dyn_cast<RankedTensorType>(query.operands[0]);
  auto out = dyn_cast<RankedTensorType>(query.results[0]);
  int64_t factor = getChannelSplit(in, query.localOperands[0]);
  if (in && out && factor > 1 && in.getRank() > 0 && out.getRank() > 0 &&
      in.getShape().back() == out.getShape().back() &&
      out.getShape().back() % factor == 0) {
    SmallVector<int64_t> shape(out.getShape());
    shape.back() /= factor;
    form.resultTypes.push_back(
        RankedTensorType::get(shape, out.getElementType()));
    return success();
  }
  if (error)
    error() << "of " << query.localOperands[0]
            << " (only regrouping the leading dims of split channels is "
               "followed)";
  return failure();
}

OpCount ReshapeOp::getCost(const DistributionQuery &query) {
  if (query.isVJP())
    return getDefaultVJPCost(query, OpCount());
  return {}; // A view: no kernel.
}

LogicalResult TransposeOp::inferLocalForm(const DistributionQuery &query,
                                          LocalForm &form,
                                          DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

OpCount TransposeOp::getCost(const DistributionQuery &query) {
  if (query.isVJP())
    return getDefaultVJPCost(query, OpCount());
  return getMovementCost(query);
}

/// A device holding a shard of `x` casts that shard: the local shape of
/// `x` with the result's element type.
LogicalResult CastOp::inferLocalForm(const DistributionQuery &query,
                                     LocalForm &form, DistributionErrorFn) {
  if (query.isVJP())
    return inferFollowPrimalsLocalForm(query, form);
  auto local = cast<RankedTensorType>(query.localOperands[0]);
  auto result = cast<RankedTensorType>(query.results[0]);
  form.resultTypes.push_back(local.clone(result.getElementType()));
  return success();
}

/// Reads `x` at its width, writes the result at its own: a bf16 copy of an
/// f32 parameter moves 6 bytes an element. One conversion an element.
OpCount CastOp::getCost(const DistributionQuery &query) {
  if (query.isVJP())
    return getDefaultVJPCost(query, getCost(query.getForward()));
  return getElementwiseCost(query, 1);
}

LogicalResult EmbeddingOp::inferLocalForm(const DistributionQuery &query,
                                          LocalForm &form,
                                          DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

/// A gather's VJP: a scatter-add of the cotangent rows.
static OpCount getScatterAddCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  c.vectorFlops = getNumElements(query.localCotangents().front());
  return c;
}

OpCount EmbeddingOp::getCost(const DistributionQuery &query) {
  return query.isVJP() ? getScatterAddCost(query) : getMovementCost(query);
}

LogicalResult CrossEntropyOp::inferLocalForm(const DistributionQuery &query,
                                             LocalForm &form,
                                             DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

OpCount CrossEntropyOp::getCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  c.vectorFlops =
      (query.isVJP() ? 3 : 5) * getNumElements(query.localOperands.front());
  return c;
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

LogicalResult RouterOp::inferLocalForm(const DistributionQuery &query,
                                       LocalForm &form, DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

OpCount RouterOp::getCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  TypeRange ins = query.localOperands;
  double t = getDim(ins[0], 0), h = getDim(ins[0], 1), e = getLastDim(ins[1]);
  // The VJP costs as much as the forward.
  c.matrixFlops = 2 * t * h * e;
  c.vectorFlops = 5 * t * e;
  return c;
}

LogicalResult DispatchOp::inferLocalForm(const DistributionQuery &query,
                                         LocalForm &form, DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

OpCount DispatchOp::getCost(const DistributionQuery &query) {
  return query.isVJP() ? getScatterAddCost(query) : getMovementCost(query);
}

SmallVector<ExpertExchange>
DispatchOp::getExpertExchanges(const DistributionQuery &query) {
  // The dispatched buffer goes to the experts' owners.
  if (query.isVJP())
    return {};
  return {ExpertExchange::ToExperts};
}

LogicalResult ExpertFfnOp::inferLocalForm(const DistributionQuery &query,
                                          LocalForm &form,
                                          DistributionErrorFn) {
  // Each device runs its experts on the buffer the all-to-all gave it.
  if (query.isVJP())
    return inferFollowPrimalsLocalForm(query, form);
  form.resultTypes.push_back(query.localOperands.front());
  return success();
}

SmallVector<unsigned>
ExpertFfnOp::getExpertWeightOperands(const DistributionQuery &query) {
  // Every operand after the buffer: w_gate, w_up, w_down.
  if (query.isVJP() && query.numPrimals != 4)
    return {};
  SmallVector<unsigned> weights;
  for (unsigned i = 1; i < query.numPrimals; ++i)
    weights.push_back(i);
  return weights;
}

SmallVector<ExpertExchange>
ExpertFfnOp::getExpertExchanges(const DistributionQuery &query) {
  // The experts' outputs (F) and the buffer's cotangent (BI) go back to the
  // tokens' devices; the weight gradients stay with the experts.
  if (!query.isVJP())
    return {ExpertExchange::FromExperts};
  SmallVector<ExpertExchange> exchanges;
  for (int64_t wrt : query.wrt)
    exchanges.push_back(wrt == 0 ? ExpertExchange::FromExperts
                                 : ExpertExchange::None);
  return exchanges;
}

OpCount ExpertFfnOp::getCost(const DistributionQuery &query) {
  if (query.isVJP()) {
    // d buf: d h = dy w_down^T, then d gate w_gate^T + d up w_up^T (6ECHF);
    // each weight one product (2ECHF): twice the forward in all.
    OpCount forward = getCost(query.getForward());
    OpCount c = getKernelBytes(query);
    bool buf = query.wrt.front() == 0;
    c.matrixFlops = (buf ? 1.0 : 1.0 / 3) * forward.matrixFlops;
    c.vectorFlops = buf ? 2 * forward.vectorFlops : 0;
    return c;
  }
  // Gate, up and down products over every slot of every expert.
  OpCount c = getKernelBytes(query);
  TypeRange ins = query.localOperands;
  double e = getDim(ins[0], 0), cap = getDim(ins[0], 1), h = getDim(ins[0], 2),
         f = getLastDim(ins[1]);
  c.matrixFlops = 6 * e * cap * h * f;
  c.vectorFlops = 5 * e * cap * f;
  return c;
}

LogicalResult CombineOp::inferLocalForm(const DistributionQuery &query,
                                        LocalForm &form, DistributionErrorFn) {
  return inferWholeOnlyLocalForm(query, form);
}

OpCount CombineOp::getCost(const DistributionQuery &query) {
  // The VJP costs the forward's FLOPs.
  OpCount c = getKernelBytes(query);
  DistributionQuery forward = query.isVJP() ? query.getForward() : query;
  c.vectorFlops = 2 * getNumElements(forward.localOperands[1]) *
                  getLastDim(forward.localResult(0));
  return c;
}

SmallVector<ExpertExchange>
CombineOp::getExpertExchanges(const DistributionQuery &query) {
  // The cotangent of the expert outputs (BI) goes to the experts' owners.
  SmallVector<ExpertExchange> exchanges;
  for (int64_t wrt : query.wrt)
    exchanges.push_back(wrt == 0 ? ExpertExchange::ToExperts
                                 : ExpertExchange::None);
  return exchanges;
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

LogicalResult SgdUpdateOp::inferLocalForm(const DistributionQuery &query,
                                          LocalForm &form,
                                          DistributionErrorFn error) {
  // Elementwise over param, grad and momentum buffer.
  return inferCommonLocalForm(query, 3, form, error);
}

OpCount SgdUpdateOp::getCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  c.vectorFlops = 4 * getNumElements(query.localOperands.front());
  return c;
}

LogicalResult AdamWUpdateOp::inferLocalForm(const DistributionQuery &query,
                                            LocalForm &form,
                                            DistributionErrorFn error) {
  // Elementwise over param, grad and both moments; the step is a scalar.
  return inferCommonLocalForm(query, 4, form, error);
}

OpCount AdamWUpdateOp::getCost(const DistributionQuery &query) {
  OpCount c = getKernelBytes(query);
  c.vectorFlops = 12 * getNumElements(query.localOperands.front());
  return c;
}
