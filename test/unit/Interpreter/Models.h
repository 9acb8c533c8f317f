//===- Models.h - Small hand-written models for interpreter tests -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Models written by hand with the NN ops, small enough that finite
// differences can visit every parameter entry. Together they use every NN op
// (and so every piper.vjp rule the autodiff emits), piper.annotate chunks
// (nested too) and arith.constant.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TEST_UNIT_INTERPRETER_MODELS_H
#define PIPER_TEST_UNIT_INTERPRETER_MODELS_H

namespace mlir::piper::test {

/// linear (with bias) / relu / linear / cross_entropy, in two pipeline
/// chunks.
inline constexpr const char *kMlp = R"mlir(
func.func @mlp(%w1: tensor<6x8xf64> {piper.param = #piper.param<"mlp.w1", normal(0.5)>},
               %b1: tensor<8xf64> {piper.param = #piper.param<"mlp.b1", zeros>},
               %w2: tensor<8x3xf64> {piper.param = #piper.param<"mlp.w2", normal(0.5)>},
               %b2: tensor<3xf64> {piper.param = #piper.param<"mlp.b2", zeros>},
               %x: tensor<4x6xf64>, %labels: tensor<4xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<4x8xf64> {
    %a = piper.linear %x, %w1, %b1 : tensor<4x6xf64>, tensor<6x8xf64>, tensor<8xf64> -> tensor<4x8xf64>
    %r = piper.relu %a : tensor<4x8xf64>
    piper.yield %r : tensor<4x8xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2, %b2 : tensor<4x8xf64>, tensor<8x3xf64>, tensor<3xf64> -> tensor<4x3xf64>
    %l = piper.cross_entropy %o, %labels : tensor<4x3xf64>, tensor<4xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}
)mlir";

/// A tiny GPT block: token embedding, pre-norm causal attention with q/k/v/o
/// projections and a residual, pre-norm SwiGLU FFN with a residual, final
/// norm, LM head and cross-entropy over the flattened tokens. V = 16, H = 8,
/// B = 2, S = 4, 2 heads, F = 16. One norm has a non-default epsilon so
/// that forward_attrs reaching the VJP is checked too.
inline constexpr const char *kGptBlock = R"mlir(
func.func @gpt(%emb: tensor<16x8xf64> {piper.param = #piper.param<"tok_emb", normal(0.5)>},
               %n1: tensor<8xf64> {piper.param = #piper.param<"block.attn_norm", ones>},
               %wq: tensor<8x8xf64> {piper.param = #piper.param<"block.attn.wq", normal(0.4)>},
               %wk: tensor<8x8xf64> {piper.param = #piper.param<"block.attn.wk", normal(0.4)>},
               %wv: tensor<8x8xf64> {piper.param = #piper.param<"block.attn.wv", normal(0.4)>},
               %wo: tensor<8x8xf64> {piper.param = #piper.param<"block.attn.wo", normal(0.4)>},
               %n2: tensor<8xf64> {piper.param = #piper.param<"block.ffn_norm", ones>},
               %wg: tensor<8x16xf64> {piper.param = #piper.param<"block.ffn.w_gate", normal(0.4)>},
               %wu: tensor<8x16xf64> {piper.param = #piper.param<"block.ffn.w_up", normal(0.4)>},
               %wd: tensor<16x8xf64> {piper.param = #piper.param<"block.ffn.w_down", normal(0.4)>},
               %nf: tensor<8xf64> {piper.param = #piper.param<"final_norm", ones>},
               %head: tensor<8x16xf64> {piper.param = #piper.param<"lm_head", normal(0.4)>},
               %ids: tensor<2x4xi64>, %labels: tensor<8xi64>) -> tensor<f64> {
  %r1 = piper.annotate {PP = 0} -> tensor<2x4x8xf64> {
    %x = piper.embedding %emb, %ids : tensor<16x8xf64>, tensor<2x4xi64> -> tensor<2x4x8xf64>
    %h = piper.rmsnorm %x, %n1 {epsilon = 1.0e-02 : f64} : tensor<2x4x8xf64>, tensor<8xf64> -> tensor<2x4x8xf64>
    %q = piper.linear %h, %wq : tensor<2x4x8xf64>, tensor<8x8xf64> -> tensor<2x4x8xf64>
    %k = piper.linear %h, %wk : tensor<2x4x8xf64>, tensor<8x8xf64> -> tensor<2x4x8xf64>
    %v = piper.linear %h, %wv : tensor<2x4x8xf64>, tensor<8x8xf64> -> tensor<2x4x8xf64>
    %a = piper.attention %q, %k, %v {num_heads = 2 : i64} : tensor<2x4x8xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64> -> tensor<2x4x8xf64>
    %o = piper.linear %a, %wo : tensor<2x4x8xf64>, tensor<8x8xf64> -> tensor<2x4x8xf64>
    %r = piper.add %x, %o : tensor<2x4x8xf64>
    piper.yield %r : tensor<2x4x8xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %h2 = piper.rmsnorm %r1, %n2 : tensor<2x4x8xf64>, tensor<8xf64> -> tensor<2x4x8xf64>
    %g = piper.linear %h2, %wg : tensor<2x4x8xf64>, tensor<8x16xf64> -> tensor<2x4x16xf64>
    %u = piper.linear %h2, %wu : tensor<2x4x8xf64>, tensor<8x16xf64> -> tensor<2x4x16xf64>
    %s = piper.swiglu %g, %u : tensor<2x4x16xf64>
    %d = piper.linear %s, %wd : tensor<2x4x16xf64>, tensor<16x8xf64> -> tensor<2x4x8xf64>
    %r2 = piper.add %r1, %d : tensor<2x4x8xf64>
    %hf = piper.rmsnorm %r2, %nf : tensor<2x4x8xf64>, tensor<8xf64> -> tensor<2x4x8xf64>
    %logits = piper.linear %hf, %head : tensor<2x4x8xf64>, tensor<8x16xf64> -> tensor<2x4x16xf64>
    %flat = piper.reshape %logits : tensor<2x4x16xf64> -> tensor<8x16xf64>
    %l = piper.cross_entropy %flat, %labels : tensor<8x16xf64>, tensor<8xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}
)mlir";

/// A tiny MoE block: input projection, top-2 router over 4 experts,
/// dispatch with capacity 3 (12 pairs for 12 slots: unless routing is
/// perfectly balanced some pairs are dropped, as the grad check asserts for
/// its inputs), per-expert SwiGLU FFN, weighted combine, residual and
/// a classification head. The expert part is an EP chunk nested in a PP
/// chunk.
inline constexpr const char *kMoeBlock = R"mlir(
func.func @moe(%win: tensor<4x4xf64> {piper.param = #piper.param<"moe.w_in", normal(0.5)>},
               %wr: tensor<4x4xf64> {piper.param = #piper.param<"moe.router", normal(0.8)>},
               %wg: tensor<4x4x8xf64> {piper.param = #piper.param<"moe.experts.w_gate", normal(0.5)>},
               %wu: tensor<4x4x8xf64> {piper.param = #piper.param<"moe.experts.w_up", normal(0.5)>},
               %wd: tensor<4x8x4xf64> {piper.param = #piper.param<"moe.experts.w_down", normal(0.5)>},
               %head: tensor<4x5xf64> {piper.param = #piper.param<"moe.head", normal(0.5)>},
               %x: tensor<6x4xf64>, %labels: tensor<6xi64>) -> tensor<f64> {
  %loss = piper.annotate {PP = 0} -> tensor<f64> {
    %h = piper.linear %x, %win : tensor<6x4xf64>, tensor<4x4xf64> -> tensor<6x4xf64>
    %moe = piper.annotate {EP = 0} -> tensor<6x4xf64> {
      %wts, %idx = piper.router %h, %wr {top_k = 2 : i64} : tensor<6x4xf64>, tensor<4x4xf64> -> tensor<6x2xf64>, tensor<6x2xi64>
      %buf = piper.dispatch %h, %idx {capacity = 3 : i64} : tensor<6x4xf64>, tensor<6x2xi64> -> tensor<4x3x4xf64>
      %y = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<4x3x4xf64>, tensor<4x4x8xf64>, tensor<4x4x8xf64>, tensor<4x8x4xf64> -> tensor<4x3x4xf64>
      %c = piper.combine %y, %wts, %idx : tensor<4x3x4xf64>, tensor<6x2xf64>, tensor<6x2xi64> -> tensor<6x4xf64>
      piper.yield %c : tensor<6x4xf64>
    }
    %r = piper.add %h, %moe : tensor<6x4xf64>
    %logits = piper.linear %r, %head : tensor<6x4xf64>, tensor<4x5xf64> -> tensor<6x5xf64>
    %l = piper.cross_entropy %logits, %labels : tensor<6x5xf64>, tensor<6xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}
)mlir";

/// The remaining ops: transpose, matmul with a shared rank-2 and with a
/// batched right operand, layernorm (non-default epsilon), gelu, silu, mul,
/// sub, softmax and reshape.
inline constexpr const char *kOtherOps = R"mlir(
func.func @ops(%wm: tensor<3x5xf64> {piper.param = #piper.param<"ops.wm", normal(0.7)>},
               %lw: tensor<5xf64> {piper.param = #piper.param<"ops.ln.w", ones>},
               %lb: tensor<5xf64> {piper.param = #piper.param<"ops.ln.b", zeros>},
               %wo: tensor<4x6xf64> {piper.param = #piper.param<"ops.wo", normal(2.0)>},
               %bo: tensor<6xf64> {piper.param = #piper.param<"ops.bo", zeros>},
               %x: tensor<2x3x4xf64>, %labels: tensor<8xi64>) -> tensor<f64> {
  %t = piper.transpose %x permutation = [0, 2, 1] : tensor<2x3x4xf64> -> tensor<2x4x3xf64>
  %m = piper.matmul %t, %wm : tensor<2x4x3xf64>, tensor<3x5xf64> -> tensor<2x4x5xf64>
  %n = piper.layernorm %m, %lw, %lb {epsilon = 1.0e-01 : f64} : tensor<2x4x5xf64>, tensor<5xf64>, tensor<5xf64> -> tensor<2x4x5xf64>
  %g = piper.gelu %n : tensor<2x4x5xf64>
  %s = piper.silu %n : tensor<2x4x5xf64>
  %p = piper.mul %g, %s : tensor<2x4x5xf64>
  %q = piper.sub %p, %n : tensor<2x4x5xf64>
  %sm = piper.softmax %q : tensor<2x4x5xf64>
  %smt = piper.transpose %sm permutation = [0, 2, 1] : tensor<2x4x5xf64> -> tensor<2x5x4xf64>
  %bm = piper.matmul %q, %smt : tensor<2x4x5xf64>, tensor<2x5x4xf64> -> tensor<2x4x4xf64>
  %r = piper.reshape %bm : tensor<2x4x4xf64> -> tensor<8x4xf64>
  %o = piper.linear %r, %wo, %bo : tensor<8x4xf64>, tensor<4x6xf64>, tensor<6xf64> -> tensor<8x6xf64>
  %l = piper.cross_entropy %o, %labels : tensor<8x6xf64>, tensor<8xi64> -> tensor<f64>
  return %l : tensor<f64>
}
)mlir";

} // namespace mlir::piper::test

#endif // PIPER_TEST_UNIT_INTERPRETER_MODELS_H
