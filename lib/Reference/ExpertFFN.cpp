//===- ExpertFFN.cpp - Batched SwiGLU expert FFN reference kernel ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each expert is an independent SwiGLU FFN over its capacity buffer, so an
// expert-parallel device can run its local experts with the same code.
// Unused (zero) slots still pass through the FFN; silu(0) = 0 makes their
// output zero, and combine never reads them anyway.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

struct FfnDims {
  int64_t experts = 0, capacity = 0, hidden = 0, ffn = 0;
};

Status checkExpertFfn(const std::string &op, const Tensor &buf,
                      const Tensor &wGate, const Tensor &wUp,
                      const Tensor &wDown, FfnDims &d) {
  PIPER_REF_TRY(checkRank(op, "buf", buf, 3));
  PIPER_REF_TRY(checkRank(op, "w_gate", wGate, 3));
  d.experts = buf.shape[0];
  d.capacity = buf.shape[1];
  d.hidden = buf.shape[2];
  d.ffn = wGate.shape[2];
  Shape inShape = {d.experts, d.hidden, d.ffn};
  Shape downShape = {d.experts, d.ffn, d.hidden};
  if (wGate.shape != inShape)
    return fail(op, "w_gate has shape ", str(wGate.shape),
                " but buf has shape ", str(buf.shape), "; it must be [",
                d.experts, ", ", d.hidden, ", F]");
  PIPER_REF_TRY(checkSameShape(op, "w_gate", wGate, "w_up", wUp));
  PIPER_REF_TRY(checkRank(op, "w_down", wDown, 3));
  if (wDown.shape != downShape)
    return fail(op, "w_down has shape ", str(wDown.shape), " but must be ",
                str(downShape), " to match buf ", str(buf.shape),
                " and w_gate ", str(wGate.shape));
  return Status::success();
}

/// The activations of expert e: gate and up pre-activations [C, F] and the
/// SwiGLU product act = silu(gate) * up.
struct ExpertActs {
  std::vector<double> gate, up, act;
};

ExpertActs expertActs(const FfnDims &d, const Tensor &buf, const Tensor &wGate,
                      const Tensor &wUp, int64_t e) {
  ExpertActs a;
  size_t n = static_cast<size_t>(d.capacity * d.ffn);
  a.gate.assign(n, 0.0);
  a.up.assign(n, 0.0);
  a.act.assign(n, 0.0);
  const double *be = buf.data.data() + e * d.capacity * d.hidden;
  gemm(be, wGate.data.data() + e * d.hidden * d.ffn, a.gate.data(), d.capacity,
       d.hidden, d.ffn, false, false, false);
  gemm(be, wUp.data.data() + e * d.hidden * d.ffn, a.up.data(), d.capacity,
       d.hidden, d.ffn, false, false, false);
  for (size_t i = 0; i < n; ++i)
    a.act[i] = siluValue(a.gate[i]) * a.up[i];
  return a;
}

/// The cotangents of the gate and up pre-activations of expert e, [C, F]
/// each, from dOut_e: dAct = dOut_e wDown_e^T, then the SwiGLU VJP.
void preActCotangents(const FfnDims &d, const ExpertActs &a,
                      const Tensor &wDown, const Tensor &dOut, int64_t e,
                      std::vector<double> &dGate, std::vector<double> &dUp) {
  size_t n = static_cast<size_t>(d.capacity * d.ffn);
  std::vector<double> dAct(n, 0.0);
  gemm(dOut.data.data() + e * d.capacity * d.hidden,
       wDown.data.data() + e * d.ffn * d.hidden, dAct.data(), d.capacity,
       d.hidden, d.ffn, false, true, false);
  dGate.assign(n, 0.0);
  dUp.assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    dGate[i] = dAct[i] * a.up[i] * siluDerivative(a.gate[i]);
    dUp[i] = dAct[i] * siluValue(a.gate[i]);
  }
}

} // namespace

Status piper::ref::expertFfn(const Tensor &buf, const Tensor &wGate,
                             const Tensor &wUp, const Tensor &wDown,
                             Tensor &out) {
  FfnDims d;
  PIPER_REF_TRY(checkExpertFfn("expert_ffn", buf, wGate, wUp, wDown, d));
  Tensor y = Tensor::zeros(buf.shape);
  for (int64_t e = 0; e < d.experts; ++e) {
    ExpertActs a = expertActs(d, buf, wGate, wUp, e);
    gemm(a.act.data(), wDown.data.data() + e * d.ffn * d.hidden,
         y.data.data() + e * d.capacity * d.hidden, d.capacity, d.ffn, d.hidden,
         false, false, false);
  }
  out = std::move(y);
  return Status::success();
}

Status piper::ref::expertFfnBackwardInput(const Tensor &buf,
                                          const Tensor &wGate,
                                          const Tensor &wUp,
                                          const Tensor &wDown,
                                          const Tensor &dOut, Tensor &dBuf) {
  const char *op = "expert_ffn BI";
  FfnDims d;
  PIPER_REF_TRY(checkExpertFfn(op, buf, wGate, wUp, wDown, d));
  PIPER_REF_TRY(checkCotangent(op, "dOut", dOut, buf.shape));
  Tensor g = Tensor::zeros(buf.shape);
  std::vector<double> dGate, dUp;
  for (int64_t e = 0; e < d.experts; ++e) {
    ExpertActs a = expertActs(d, buf, wGate, wUp, e);
    preActCotangents(d, a, wDown, dOut, e, dGate, dUp);
    double *ge = g.data.data() + e * d.capacity * d.hidden;
    // dBuf_e = dGate wGate_e^T + dUp wUp_e^T.
    gemm(dGate.data(), wGate.data.data() + e * d.hidden * d.ffn, ge, d.capacity,
         d.ffn, d.hidden, false, true, false);
    gemm(dUp.data(), wUp.data.data() + e * d.hidden * d.ffn, ge, d.capacity,
         d.ffn, d.hidden, false, true, true);
  }
  dBuf = std::move(g);
  return Status::success();
}

Status piper::ref::expertFfnBackwardWeight(const Tensor &buf,
                                           const Tensor &wGate,
                                           const Tensor &wUp,
                                           const Tensor &wDown,
                                           const Tensor &dOut, Tensor &dWGate,
                                           Tensor &dWUp, Tensor &dWDown) {
  const char *op = "expert_ffn BW";
  FfnDims d;
  PIPER_REF_TRY(checkExpertFfn(op, buf, wGate, wUp, wDown, d));
  PIPER_REF_TRY(checkCotangent(op, "dOut", dOut, buf.shape));
  Tensor gGate = Tensor::zeros(wGate.shape), gUp = Tensor::zeros(wUp.shape),
         gDown = Tensor::zeros(wDown.shape);
  std::vector<double> dGate, dUp;
  for (int64_t e = 0; e < d.experts; ++e) {
    ExpertActs a = expertActs(d, buf, wGate, wUp, e);
    preActCotangents(d, a, wDown, dOut, e, dGate, dUp);
    const double *be = buf.data.data() + e * d.capacity * d.hidden;
    int64_t inOff = e * d.hidden * d.ffn;
    // dWDown_e = act^T dOut_e; dWGate_e = buf_e^T dGate; dWUp_e = buf_e^T dUp.
    gemm(a.act.data(), dOut.data.data() + e * d.capacity * d.hidden,
         gDown.data.data() + e * d.ffn * d.hidden, d.ffn, d.capacity, d.hidden,
         true, false, false);
    gemm(be, dGate.data(), gGate.data.data() + inOff, d.hidden, d.capacity,
         d.ffn, true, false, false);
    gemm(be, dUp.data(), gUp.data.data() + inOff, d.hidden, d.capacity, d.ffn,
         true, false, false);
  }
  dWGate = std::move(gGate);
  dWUp = std::move(gUp);
  dWDown = std::move(gDown);
  return Status::success();
}
