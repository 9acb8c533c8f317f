//===- Kernels.h - f64 reference forward and VJP kernels --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The forward and vector-Jacobian product (VJP) of every neural-network op of
// Piper's model IR, in f64. This is the ground truth that strategy-invariance
// tests compare against (every valid strategy must reproduce the serial
// program to about 1e-9 in f64), so clarity beats speed here.
//
// Conventions, shared by every function below:
//  - Results go to output parameters and the function returns a Status. The
//    outputs are written only on success, and may alias the inputs.
//  - Every backward function takes all the forward inputs (in the forward's
//    order, even those it only needs for their shape), then the output
//    cotangent(s) (`dy`, or `dOut` for MoE ops), then the gradients it
//    produces. Backward functions recompute what they need from the inputs
//    rather than taking saved forward outputs.
//  - Ops with parameters split their VJP in two, because zero-bubble pipeline
//    schedules run them at different times: `<op>BackwardInput` (BI) returns
//    the gradient of the activations and `<op>BackwardWeight` (BW) those of
//    the parameters. Ops without parameters have a single `<op>Backward`.
//  - Error messages start with the op's IR name ("linear: ..."), or with the
//    name and "BI"/"BW"/"VJP" for a backward function.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_REFERENCE_KERNELS_H
#define PIPER_REFERENCE_KERNELS_H

#include "piper/Reference/Tensor.h"

#include <cstdint>
#include <vector>

namespace piper::ref {

//===----------------------------------------------------------------------===//
// Elementwise (Elementwise.cpp)
//===----------------------------------------------------------------------===//

/// out = lhs + rhs; lhs and rhs must have the same shape (no broadcasting).
Status add(const Tensor &lhs, const Tensor &rhs, Tensor &out);
/// VJP of add: dLhs = dy, dRhs = dy.
Status addBackward(const Tensor &lhs, const Tensor &rhs, const Tensor &dy,
                   Tensor &dLhs, Tensor &dRhs);

/// out = lhs - rhs; same shapes.
Status sub(const Tensor &lhs, const Tensor &rhs, Tensor &out);
/// VJP of sub: dLhs = dy, dRhs = -dy.
Status subBackward(const Tensor &lhs, const Tensor &rhs, const Tensor &dy,
                   Tensor &dLhs, Tensor &dRhs);

/// out = lhs * rhs elementwise; same shapes.
Status mul(const Tensor &lhs, const Tensor &rhs, Tensor &out);
/// VJP of mul: dLhs = dy * rhs, dRhs = dy * lhs.
Status mulBackward(const Tensor &lhs, const Tensor &rhs, const Tensor &dy,
                   Tensor &dLhs, Tensor &dRhs);

/// out = max(x, 0).
Status relu(const Tensor &x, Tensor &out);
/// VJP of relu: dx = dy where x > 0, else 0 (the derivative at exactly 0 is
/// taken as 0, as PyTorch does).
Status reluBackward(const Tensor &x, const Tensor &dy, Tensor &dx);

/// GELU, tanh approximation:
/// out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Status gelu(const Tensor &x, Tensor &out);
/// VJP of gelu (of the tanh approximation, not of the erf form).
Status geluBackward(const Tensor &x, const Tensor &dy, Tensor &dx);

/// SiLU: out = x * sigmoid(x).
Status silu(const Tensor &x, Tensor &out);
/// VJP of silu: dx = dy * sigmoid(x) (1 + x (1 - sigmoid(x))).
Status siluBackward(const Tensor &x, const Tensor &dy, Tensor &dx);

/// SwiGLU: out = silu(gate) * up; same shapes.
Status swiglu(const Tensor &gate, const Tensor &up, Tensor &out);
/// VJP of swiglu: dGate = dy * up * silu'(gate), dUp = dy * silu(gate).
Status swigluBackward(const Tensor &gate, const Tensor &up, const Tensor &dy,
                      Tensor &dGate, Tensor &dUp);

//===----------------------------------------------------------------------===//
// Matmul and linear (Linear.cpp)
//===----------------------------------------------------------------------===//

/// Batched matrix product: a [..., M, K] times b [..., K, N] gives
/// [..., M, N]. b either has the rank and leading (batch) dims of a, or has
/// rank 2 and is shared by every batch element. Both ranks are at least 2.
Status matmul(const Tensor &a, const Tensor &b, Tensor &out);
/// VJP of matmul: dA = dy b^T and dB = a^T dy per batch element; a shared
/// rank-2 b gets the sum over the batch.
Status matmulBackward(const Tensor &a, const Tensor &b, const Tensor &dy,
                      Tensor &dA, Tensor &dB);

/// Affine layer: out = x w + bias, with x [..., In] (rank >= 1), w [In, Out]
/// and an optional bias [Out] (nullptr for none); out is [..., Out].
Status linear(const Tensor &x, const Tensor &w, const Tensor *bias,
              Tensor &out);
/// BI of linear: dx = dy w^T. The bias does not affect dx, so it is not
/// taken.
Status linearBackwardInput(const Tensor &x, const Tensor &w, const Tensor &dy,
                           Tensor &dx);
/// BW of linear: dw = sum over the leading dims of x^T dy; if `dBias` is not
/// null, *dBias = sum of dy over the leading dims.
Status linearBackwardWeight(const Tensor &x, const Tensor &w, const Tensor &dy,
                            Tensor &dw, Tensor *dBias);

//===----------------------------------------------------------------------===//
// Normalisation (Norms.cpp)
//===----------------------------------------------------------------------===//

/// RMSNorm over the last dim: for each row r of x [..., H],
/// out_r = r / sqrt(mean(r^2) + eps) * w, with w [H] and eps >= 0 finite.
Status rmsnorm(const Tensor &x, const Tensor &w, double eps, Tensor &out);
/// BI of rmsnorm: with s = 1/sqrt(mean(x^2) + eps) and g = dy * w,
/// dx = s (g - x s^2 mean(g x)) per row.
Status rmsnormBackwardInput(const Tensor &x, const Tensor &w, double eps,
                            const Tensor &dy, Tensor &dx);
/// BW of rmsnorm: dw = sum over rows of dy * x * s.
Status rmsnormBackwardWeight(const Tensor &x, const Tensor &w, double eps,
                             const Tensor &dy, Tensor &dw);

/// LayerNorm over the last dim with the biased variance (divide by H):
/// out = (x - mean) / sqrt(var + eps) * w + b, with w, b [H], eps >= 0.
Status layernorm(const Tensor &x, const Tensor &w, const Tensor &b, double eps,
                 Tensor &out);
/// BI of layernorm: with xhat the normalised row, s = 1/sqrt(var + eps) and
/// g = dy * w, dx = s (g - mean(g) - xhat mean(g xhat)) per row.
Status layernormBackwardInput(const Tensor &x, const Tensor &w, const Tensor &b,
                              double eps, const Tensor &dy, Tensor &dx);
/// BW of layernorm: dw = sum over rows of dy * xhat, db = sum of dy.
Status layernormBackwardWeight(const Tensor &x, const Tensor &w,
                               const Tensor &b, double eps, const Tensor &dy,
                               Tensor &dw, Tensor &db);

//===----------------------------------------------------------------------===//
// Softmax and loss (Softmax.cpp, Loss.cpp)
//===----------------------------------------------------------------------===//

/// Softmax over the last dim of x (rank >= 1), computed stably by
/// subtracting the row maximum first.
Status softmax(const Tensor &x, Tensor &out);
/// VJP of softmax: with y = softmax(x), dx = y (dy - sum(dy y)) per row.
Status softmaxBackward(const Tensor &x, const Tensor &dy, Tensor &dx);

/// Mean cross-entropy: logits [N, V], labels [N] with values in [0, V),
/// N >= 1. loss is rank 0: (1/N) sum_n (logsumexp(logits_n) -
/// logits_n[labels_n]).
Status crossEntropy(const Tensor &logits, const IndexTensor &labels,
                    Tensor &loss);
/// VJP of crossEntropy for a rank-0 (or one-element) cotangent dLoss:
/// dLogits_n = dLoss / N (softmax(logits_n) - onehot(labels_n)).
Status crossEntropyBackward(const Tensor &logits, const IndexTensor &labels,
                            const Tensor &dLoss, Tensor &dLogits);

//===----------------------------------------------------------------------===//
// Attention (Attention.cpp)
//===----------------------------------------------------------------------===//

/// Causal multi-head self-attention without projections. q, k, v are
/// [B, S, D] with D = numHeads * hd. Head h uses columns [h hd, (h+1) hd).
/// Per batch element and head: scores_ij = q_i . k_j / sqrt(hd) for j <= i
/// (positions j > i are excluded, not just given a large negative score),
/// p_i = softmax_j(scores_i), out_i = sum_j p_ij v_j. out is [B, S, D].
/// Grouped-query attention: with numKvHeads (0: numHeads) dividing
/// numHeads, k and v are [B, S, numKvHeads * hd] and query head h reads
/// key/value head h / (numHeads / numKvHeads).
Status attention(const Tensor &q, const Tensor &k, const Tensor &v,
                 int64_t numHeads, Tensor &out, int64_t numKvHeads = 0);
/// VJP of attention: dq, dk, dv (attention itself has no parameters); dk
/// and dv sum over the query heads of their group.
Status attentionBackward(const Tensor &q, const Tensor &k, const Tensor &v,
                         int64_t numHeads, const Tensor &dy, Tensor &dq,
                         Tensor &dk, Tensor &dv, int64_t numKvHeads = 0);

/// Rotary position embedding, rotate-half form: x [B, S, D] holds heads of
/// headDim (even) channels; channel c < headDim/2 of a head pairs with
/// c + headDim/2 and both rotate by a = s theta^(-2c/headDim) at position
/// s (by -a when `inverse`, the transpose and so the VJP). Position s is
/// s + `offset`; `rotaryDim` > 0 rotates only the first rotaryDim channels
/// of each head (pairs c, c + rotaryDim/2, a = s theta^(-2c/rotaryDim)) and
/// passes the rest through.
Status rope(const Tensor &x, int64_t headDim, double theta, bool inverse,
            Tensor &out, int64_t offset = 0, int64_t rotaryDim = 0);

//===----------------------------------------------------------------------===//
// Embedding (Embedding.cpp)
//===----------------------------------------------------------------------===//

/// Row lookup: table [V, H], ids of any shape with values in [0, V);
/// out[..., :] = table[ids[...], :], shape ids.shape + [H].
Status embedding(const Tensor &table, const IndexTensor &ids, Tensor &out);
/// BW of embedding: dTable [V, H] is zero except that dy[p, :] is added to
/// row ids[p] for every position p (repeated ids accumulate). ids are not
/// differentiable, so there is no BI.
Status embeddingBackwardWeight(const Tensor &table, const IndexTensor &ids,
                               const Tensor &dy, Tensor &dTable);

//===----------------------------------------------------------------------===//
// Layout (Layout.cpp)
//===----------------------------------------------------------------------===//

/// Permutes dims: out.shape[i] = x.shape[perm[i]] and
/// out[i_0, ..., i_{r-1}] = x[j] with j[perm[d]] = i_d. perm must be a
/// permutation of 0..rank-1.
Status transpose(const Tensor &x, const std::vector<int64_t> &perm,
                 Tensor &out);
/// VJP of transpose: dx = transpose(dy, inverse(perm)).
Status transposeBackward(const Tensor &x, const std::vector<int64_t> &perm,
                         const Tensor &dy, Tensor &dx);

/// Reinterprets the row-major data of x with `shape` (same number of
/// elements, all dims >= 0).
Status reshape(const Tensor &x, const Shape &shape, Tensor &out);
/// VJP of reshape: dx = dy reshaped back to x's shape.
Status reshapeBackward(const Tensor &x, const Shape &shape, const Tensor &dy,
                       Tensor &dx);

//===----------------------------------------------------------------------===//
// Mixture of experts (Router.cpp, MoE.cpp, ExpertFFN.cpp)
//
// Qwen3-style top-k routing. A (token t, choice j) pair is routed to expert
// indices[t][j]; the order of pairs is t ascending, then j ascending, and
// that order decides which pairs fit in an expert's `capacity` slots.
//===----------------------------------------------------------------------===//

/// Router: x [T, H], w [H, E], 1 <= k <= E. p = softmax over E of x w; per
/// token the k largest probabilities are selected, in descending order,
/// equal probabilities broken by the lower expert index. indices [T, k]
/// receives the experts and weights [T, k] the selected probabilities
/// renormalised to sum to 1 per token.
Status router(const Tensor &x, const Tensor &w, int64_t k, Tensor &weights,
              IndexTensor &indices);
/// BI of router for the cotangent dWeights [T, k] of the weights: dx.
/// Gradients flow through the selected probabilities, including the
/// renormalisation, and through the full softmax; the selection itself
/// (indices) is piecewise constant and has no gradient.
Status routerBackwardInput(const Tensor &x, const Tensor &w, int64_t k,
                           const Tensor &dWeights, Tensor &dx);
/// BW of router: dw, under the same rule as routerBackwardInput.
Status routerBackwardWeight(const Tensor &x, const Tensor &w, int64_t k,
                            const Tensor &dWeights, Tensor &dw);

/// The capacity rule shared by dispatch and combine: pair (t, j) gets slot
/// s = the number of earlier pairs routed to the same expert
/// e = indices[t][j]; pairs with s >= capacity are dropped. slots[t k + j]
/// receives s, or -1 for a dropped pair. indices is [T, k] with values in
/// [0, numExperts); numExperts >= 1 and capacity >= 0.
Status assignExpertSlots(const IndexTensor &indices, int64_t numExperts,
                         int64_t capacity, std::vector<int64_t> &slots);

/// Dispatch: x [T, H] into buffer [numExperts, capacity, H]; pair (t, j) with
/// slot s copies x[t] to buffer[indices[t][j], s]. Dropped pairs are not
/// copied; unused slots are zero.
Status dispatch(const Tensor &x, const IndexTensor &indices, int64_t numExperts,
                int64_t capacity, Tensor &buffer);
/// VJP of dispatch: dx[t] = sum over the kept pairs (t, j) of
/// dOut[indices[t][j], s]; tokens whose pairs were all dropped get 0.
Status dispatchBackward(const Tensor &x, const IndexTensor &indices,
                        int64_t numExperts, int64_t capacity,
                        const Tensor &dOut, Tensor &dx);

/// Expert FFN (SwiGLU), per expert e independently:
/// out_e = (silu(buf_e wGate_e) * (buf_e wUp_e)) wDown_e with buf [E, C, H],
/// wGate and wUp [E, H, F], wDown [E, F, H]; out is [E, C, H].
Status expertFfn(const Tensor &buf, const Tensor &wGate, const Tensor &wUp,
                 const Tensor &wDown, Tensor &out);
/// BI of expertFfn: dBuf.
Status expertFfnBackwardInput(const Tensor &buf, const Tensor &wGate,
                              const Tensor &wUp, const Tensor &wDown,
                              const Tensor &dOut, Tensor &dBuf);
/// BW of expertFfn: dWGate, dWUp, dWDown.
Status expertFfnBackwardWeight(const Tensor &buf, const Tensor &wGate,
                               const Tensor &wUp, const Tensor &wDown,
                               const Tensor &dOut, Tensor &dWGate, Tensor &dWUp,
                               Tensor &dWDown);

/// Combine: y [E, capacity, H] (expert outputs), weights and indices
/// [T, k]; out [T, H] with out[t] = sum_j weights[t][j] y[indices[t][j], s]
/// over the kept pairs, under the slot rule of assignExpertSlots (dropped
/// pairs contribute exactly 0). y.shape[1] must equal capacity.
Status combine(const Tensor &y, const Tensor &weights,
               const IndexTensor &indices, int64_t capacity, Tensor &out);
/// VJP of combine: dY[e, s] = weights[t][j] dOut[t] for the kept pair (t, j)
/// in slot (e, s), zero for unused slots; dWeights[t][j] = y[e, s] . dOut[t]
/// for kept pairs, 0 for dropped ones.
Status combineBackward(const Tensor &y, const Tensor &weights,
                       const IndexTensor &indices, int64_t capacity,
                       const Tensor &dOut, Tensor &dY, Tensor &dWeights);

} // namespace piper::ref

#endif // PIPER_REFERENCE_KERNELS_H
