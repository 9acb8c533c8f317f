//===- PiperNNOps.td - Piper neural-network operations -----*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The neural-network operations of the model level: one training step's
// forward computation on ranked tensors. Every op is pure; its verifier
// checks every relation between static dimensions and leaves `?` dimensions
// to run time. The formats read `operands attrs : operand types -> result
// types`, shortened to `: type` where all operands and the result share one
// type.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERNNOPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPERNNOPS_TD

include "piper/Dialect/Piper/IR/PiperBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "piper/Dialect/Piper/IR/PiperInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Piper_FloatTensor : RankedTensorOf<[F32, F64, BF16]> {
  let summary = "ranked tensor of f32, f64 or bf16 values";
}

def Piper_IndexTensor : RankedTensorOf<[I64]> {
  let summary = "ranked tensor of i64 values";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// All NN ops are side-effect free.
class Piper_NNOp<string mnemonic, list<Trait> traits = []>
    : Piper_Op<mnemonic, !listconcat([Pure], traits)>;

// Same-type ops use AllTypesMatch rather than SameOperandsAndResultType: the
// latter is defined in InferTypeOpInterface.td, and including that file makes
// ODS attach InferTypeOpInterface to every op whose result type follows from
// its operands, an interface PiperOps.h does not declare.

/// `%r = piper.<op> %x : T`: one operand, result of the same type. The extra
/// builder takes the result type from the operand.
class Piper_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Piper_NNOp<mnemonic,
                 !listconcat([AllTypesMatch<["x", "result"]>], traits)> {
  let arguments = (ins Piper_FloatTensor:$x);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let builders = [OpBuilder<(ins "::mlir::Value":$x), [{
    build($_builder, $_state, x.getType(), x);
  }]>];
}

/// `%r = piper.<op> %lhs, %rhs : T`: two operands and the result of one type.
class Piper_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Piper_NNOp<mnemonic, !listconcat(
          [AllTypesMatch<["lhs", "rhs", "result"]>], traits)> {
  let arguments = (ins Piper_FloatTensor:$lhs, Piper_FloatTensor:$rhs);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let builders = [OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
    build($_builder, $_state, lhs.getType(), lhs, rhs);
  }]>];
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

def Piper_MatmulOp : Piper_NNOp<"matmul", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "batched matrix product";
  let description = [{
    Multiplies `lhs[..., M, K]` by `rhs[..., K, N]` into `result[..., M, N]`:
    `result[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n]`. The leading
    (batch) dimensions of `lhs` and `rhs` are equal, or `rhs` has rank 2 and
    is shared by every batch element (a weight applied to a batch of
    activations).

    Example:

    ```mlir
    %c = piper.matmul %a, %b : tensor<2x4x16xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
    %d = piper.matmul %a, %w : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
    ```

    **Constraints:**
    - `lhs`, `rhs` and the result have one element type.
    - `lhs` has rank >= 2; `rhs` has rank 2 or the rank of `lhs`.
    - When `rhs` has the rank of `lhs`, their batch dims are equal.
    - The contracting dim of `lhs` (its last) equals dim `-2` of `rhs`.
    - The result type is `tensor<[batch of lhs] x M x N>`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$lhs, Piper_FloatTensor:$rhs);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

def Piper_LinearOp : Piper_NNOp<"linear", [
    Piper_DistributionRule<["inferLocalForm", "getCost", "getWeightOperand",
        "verifyWeightSplit", "getPartialSums",
        "getTokenGatheredOperands"]>]> {
  let summary = "affine layer: x times a weight matrix, plus an optional bias";
  let description = [{
    Computes `result[..., o] = sum_i x[..., i] * w[i, o] (+ bias[o])` for
    `x[..., In]`, `w[In, Out]` and an optional `bias[Out]`; the result is
    `[..., Out]`. The weight is stored input-major, so no transpose is
    implied.

    Example:

    ```mlir
    %y = piper.linear %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
    %z = piper.linear %x, %w : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x32xf32>
    ```

    **Constraints:**
    - `x`, `w`, `bias` and the result have one element type.
    - `x` has rank >= 1, `w` rank 2 and `bias` rank 1.
    - The last dim of `x` equals dim 0 of `w`.
    - Dim 0 of `bias` equals dim 1 of `w`.
    - The result type is `x`'s with the last dim replaced by dim 1 of `w`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$x, Piper_FloatTensor:$w,
                       Optional<Piper_FloatTensor>:$bias);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w (`,` $bias^)? attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

def Piper_AddOp : Piper_BinaryOp<"add", [
    Commutative, Piper_DistributionRule<["propagatesPartialSums"]>]> {
  let summary = "elementwise sum";
  let description = [{
    `result = lhs + rhs`, element by element. There is no broadcasting.

    Example:

    ```mlir
    %r = piper.add %a, %b : tensor<4x16xf32>
    ```

    **Constraints:**
    - `lhs`, `rhs` and the result have the same type.
  }];
}

def Piper_SubOp : Piper_BinaryOp<"sub", [Piper_DistributionRule<>]> {
  let summary = "elementwise difference";
  let description = [{
    `result = lhs - rhs`, element by element. There is no broadcasting.

    Example:

    ```mlir
    %r = piper.sub %a, %b : tensor<4x16xf64>
    ```

    **Constraints:**
    - `lhs`, `rhs` and the result have the same type.
  }];
}

def Piper_MulOp : Piper_BinaryOp<"mul", [
    Commutative, Piper_DistributionRule<>]> {
  let summary = "elementwise product";
  let description = [{
    `result = lhs * rhs`, element by element. There is no broadcasting.

    Example:

    ```mlir
    %r = piper.mul %a, %b : tensor<4x16xbf16>
    ```

    **Constraints:**
    - `lhs`, `rhs` and the result have the same type.
  }];
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

def Piper_ReluOp : Piper_UnaryOp<"relu", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<>]> {
  let summary = "rectified linear unit";
  let description = [{
    `result = max(x, 0)`, element by element.

    Example:

    ```mlir
    %r = piper.relu %x : tensor<4x16xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
  }];
}

def Piper_GeluOp : Piper_UnaryOp<"gelu", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<["getFlopsPerElement"]>]> {
  let summary = "Gaussian error linear unit, tanh approximation";
  let description = [{
    The tanh approximation of GELU, element by element:
    `result = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`
    (PyTorch's `gelu(x, approximate="tanh")`).

    Example:

    ```mlir
    %r = piper.gelu %x : tensor<4x16xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
  }];
}

def Piper_GeluErfOp : Piper_UnaryOp<"gelu_erf", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<["getFlopsPerElement"]>]> {
  let summary = "Gaussian error linear unit, exact (erf) form";
  let description = [{
    The exact GELU, element by element:
    `result = 0.5 * x * (1 + erf(x / sqrt(2)))` (PyTorch's `nn.GELU()` and
    `gelu(x)` with the default `approximate="none"`). Its derivative is
    `0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x^2 / 2) / sqrt(2 pi)`.
    `piper.gelu` is the tanh approximation.

    Like `piper.sigmoid`, the op is its ODS definition and its interface
    methods only: the interpreter, autodiff, the native kernel, tensor
    parallelism and the simulator derive from them.

    Example:

    ```mlir
    %r = piper.gelu_erf %x : tensor<4x16xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
  }];
}

def Piper_SiluOp : Piper_UnaryOp<"silu", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<["getFlopsPerElement"]>]> {
  let summary = "sigmoid linear unit (swish)";
  let description = [{
    `result = x * sigmoid(x) = x / (1 + exp(-x))`, element by element.

    Example:

    ```mlir
    %r = piper.silu %x : tensor<4x16xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
  }];
}

def Piper_SigmoidOp : Piper_UnaryOp<"sigmoid", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<["getFlopsPerElement"]>]> {
  let summary = "logistic sigmoid";
  let description = [{
    `result = 1 / (1 + exp(-x))`, element by element (PyTorch's
    `torch.sigmoid`). Its derivative is `sigmoid(x) * (1 - sigmoid(x))`.

    The op is defined entirely by its `ElementwiseOpInterface` methods (its
    value, derivative and IR payloads) and the elementwise default of
    `DistributionOpInterface` (with 4 FLOPs an element): the interpreter,
    autodiff, the native kernel (a `linalg.generic`), tensor parallelism,
    the simulator and the memory plan all derive from them.

    Example:

    ```mlir
    %r = piper.sigmoid %x : tensor<4x16xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
  }];
}

def Piper_TanhOp : Piper_UnaryOp<"tanh", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<["getFlopsPerElement"]>]> {
  let summary = "hyperbolic tangent";
  let description = [{
    `result = tanh(x)`, element by element (PyTorch's `torch.tanh`). Its
    derivative is `1 - tanh(x)^2`.

    Like `piper.sigmoid`, the op is its ODS definition and its interface
    methods only; nothing else in the compiler names it.

    Example:

    ```mlir
    %r = piper.tanh %x : tensor<4x16xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
  }];
}

def Piper_SwigluOp : Piper_NNOp<"swiglu", [
    DeclareOpInterfaceMethods<Piper_ElementwiseOpInterface>,
    Piper_DistributionRule<["getFlopsPerElement"]>,
    AllTypesMatch<["gate", "up", "result"]>]> {
  let summary = "SwiGLU gate: silu(gate) * up";
  let description = [{
    `result = silu(gate) * up`, element by element, the gated activation of
    LLaMA- and Qwen-style feed-forward blocks.

    Example:

    ```mlir
    %h = piper.swiglu %gate, %up : tensor<4x64xf32>
    ```

    **Constraints:**
    - `gate`, `up` and the result have the same type.
  }];
  let arguments = (ins Piper_FloatTensor:$gate, Piper_FloatTensor:$up);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
  let builders = [OpBuilder<(ins "::mlir::Value":$gate, "::mlir::Value":$up), [{
    build($_builder, $_state, gate.getType(), gate, up);
  }]>];
}

def Piper_SoftmaxOp : Piper_UnaryOp<"softmax", [
    Piper_DistributionRule<["inferLocalForm", "getFlopsPerElement"]>]> {
  let summary = "softmax over the last dimension";
  let description = [{
    Normalises each row along the last dimension:
    `result[..., i] = exp(x[..., i] - m) / sum_j exp(x[..., j] - m)` with
    `m = max_j x[..., j]` (the shift does not change the value; it keeps
    `exp` finite).

    Example:

    ```mlir
    %p = piper.softmax %logits : tensor<4x8x8xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
    - `x` has rank >= 1.
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

def Piper_RmsNormOp : Piper_NNOp<"rmsnorm", [
    Piper_DistributionRule<["inferLocalForm", "getFlopsPerElement",
                            "getPartialSums"]>]> {
  let summary = "root-mean-square normalisation over the last dimension";
  let description = [{
    For `x[..., H]` and the weight `w[G]`, where `G` divides `H`: each group
    of `G` consecutive channels `[g G, (g + 1) G)` is normalised on its own,
    `result[..., gG + c] = x[..., gG + c] / sqrt(mean_j(x[..., gG + j]^2) +
    epsilon) * w[c]`. With `G = H` (the usual case) that is one RMSNorm over
    the last dimension; with `G` the head dim of attention heads packed as
    `[B, S, heads * G]` it is the per-head q/k norm of Qwen3-style attention
    (tensor parallelism may then split the channels in whole groups).
    `epsilon` defaults to 1e-6 and is then not printed.

    Example:

    ```mlir
    %y = piper.rmsnorm %x, %w {epsilon = 1.0e-05 : f64} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    %qn = piper.rmsnorm %q, %wq : tensor<2x8x32xf32>, tensor<8xf32> -> tensor<2x8x32xf32>
    ```

    **Constraints:**
    - `x`, `w` and the result have one element type.
    - `x` has rank >= 1 and `w` rank 1.
    - Dim 0 of `w` divides the last dim of `x`.
    - `epsilon` > 0.
    - The result type is the type of `x`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$x, Piper_FloatTensor:$w,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Piper_LayerNormOp : Piper_NNOp<"layernorm", [
    Piper_DistributionRule<["inferLocalForm", "getFlopsPerElement"]>]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    For `x[..., H]`, the weight `w[H]` and the bias `b[H]`:
    `result[..., h] = (x[..., h] - mu) / sqrt(var + epsilon) * w[h] + b[h]`
    where `mu` and `var` are the mean and the (biased, divide by `H`)
    variance of `x[..., :]`. `epsilon` defaults to 1e-5 and is then not
    printed.

    Example:

    ```mlir
    %y = piper.layernorm %x, %w, %b : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    ```

    **Constraints:**
    - `x`, `w`, `b` and the result have one element type.
    - `x` has rank >= 1; `w` and `b` rank 1.
    - Dim 0 of `w` and dim 0 of `b` equal the last dim of `x`.
    - `epsilon` > 0.
    - The result type is the type of `x`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$x, Piper_FloatTensor:$w,
                       Piper_FloatTensor:$b,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w `,` $b attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

def Piper_AttentionOp : Piper_NNOp<"attention", [
    Piper_DistributionRule<["inferLocalForm", "getCost",
        "getChannelGroups"]>]> {
  let summary = "causal multi-head self-attention";
  let description = [{
    Scaled dot-product attention with a causal mask over `q`, `k` and `v`,
    all `[B, S, D]`. The last dimension is split into `num_heads` heads of
    `Dh = D / num_heads` contiguous channels: head `h` uses channels
    `[h * Dh, (h + 1) * Dh)`. For each batch `b` and head `h`:

    ```
    scores[i, j] = sum_c q[b, i, hc] * k[b, j, hc] / sqrt(Dh)   (j <= i)
    p[i, :]      = softmax over j <= i of scores[i, j]          (j > i get 0)
    result[b, i, hc] = sum_j p[i, j] * v[b, j, hc]
    ```

    where `hc = h * Dh + c`. The projections to `q`, `k`, `v` and the output
    projection are separate `piper.linear` ops.

    Grouped-query attention: with `num_kv_heads = Hkv` (a divisor of
    `num_heads`), `k` and `v` are `[B, S, Hkv * Dh]` and query head `h` reads
    key/value head `h / (num_heads / Hkv)` (PyTorch's
    `repeat_interleave(num_heads / Hkv, dim=heads)`); `Hkv = 1` is
    multi-query attention. Absent, `num_kv_heads` is `num_heads`. Tensor
    parallelism splits q by heads and k, v by key/value heads, the same
    number of ways.

    Example:

    ```mlir
    %o = piper.attention %q, %k, %v {num_heads = 4 : i64} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
    %g = piper.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64} : tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x32xf32>
    ```

    **Constraints:**
    - `q`, `k`, `v` and the result have one element type.
    - `q`, `k` and `v` have rank 3; dims 0 and 1 are equal.
    - `num_heads` >= 1 and divides D (dim 2 of `q`).
    - `num_kv_heads`, if present, is >= 1 and divides `num_heads`.
    - Dim 2 of `k` and of `v` is `num_kv_heads * D / num_heads`.
    - The result type is the type of `q`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$q, Piper_FloatTensor:$k,
                       Piper_FloatTensor:$v, I64Attr:$num_heads,
                       OptionalAttr<I64Attr>:$num_kv_heads);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

def Piper_RopeOp : Piper_NNOp<"rope", [
    AllTypesMatch<["x", "result"]>,
    Piper_DistributionRule<["inferLocalForm", "getFlopsPerElement"]>]> {
  let summary = "rotary position embedding (RoPE), rotate-half form";
  let description = [{
    Rotates each head of `x[B, S, D]` by angles that grow with the position.
    The last dimension holds heads of `Dh = head_dim` channels (head `n` is
    `[n Dh, (n + 1) Dh)`); within a head, channel `c < Dh / 2` is paired
    with `c + Dh / 2`. At position `s` (the index along dim 1) with
    `a = s * theta^(-2c / Dh)`:

    ```
    result[b, s, nDh + c]        = x[.., c] cos(a) - x[.., c + Dh/2] sin(a)
    result[b, s, nDh + c + Dh/2] = x[.., c + Dh/2] cos(a) + x[.., c] sin(a)
    ```

    which is `x * cos + rotate_half(x) * sin` of Llama/Qwen, with
    `rotate_half(x) = cat(-x[.., Dh/2:], x[.., :Dh/2])` and position ids
    `0 .. S-1`. With `inverse` the rotation is by `-a`: the transpose of
    the forward rotation, hence its VJP.

    `offset` shifts the positions: index `s` along dim 1 is position
    `s + offset` (HF's `position_ids = arange(offset, offset + S)`, a
    sequence continued from a cache or a later chunk). `rotary_dim = R`
    rotates only the first `R` channels of each head, as GPT-NeoX's
    `rotary_ndims` and Phi's `partial_rotary_factor` do: within them
    channel `c < R / 2` pairs with `c + R / 2` at angle
    `(s + offset) * theta^(-2c / R)`, and channels `R .. Dh-1` pass
    through unchanged. Without `rotary_dim` every channel rotates
    (`R = Dh`).

    Example:

    ```mlir
    %r = piper.rope %q {head_dim = 8 : i64, theta = 1.0e+04 : f64} : tensor<2x8x32xf32>
    %p = piper.rope %q {head_dim = 8 : i64, offset = 16 : i64, rotary_dim = 4 : i64} : tensor<2x8x32xf32>
    ```

    **Constraints:**
    - `x` and the result have the same type.
    - `x` has rank 3.
    - `head_dim` is even, >= 2 and divides dim 2 of `x`.
    - `theta` > 0.
    - `offset` >= 0.
    - `rotary_dim`, when present, is even, >= 2 and <= `head_dim`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$x, I64Attr:$head_dim,
                       DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                       UnitAttr:$inverse,
                       DefaultValuedAttr<I64Attr, "0">:$offset,
                       OptionalAttr<I64Attr>:$rotary_dim);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

def Piper_EmbeddingOp : Piper_NNOp<"embedding", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "looks up rows of an embedding table";
  let description = [{
    For `table[V, H]` and token ids `ids[...]`:
    `result[..., h] = table[ids[...], h]`; the result is `[..., H]`. Ids lie
    in `[0, V)`; that is a property of the values and is not verified.

    Example:

    ```mlir
    %e = piper.embedding %table, %ids : tensor<1000x64xf32>, tensor<2x8xi64> -> tensor<2x8x64xf32>
    ```

    **Constraints:**
    - `table` and the result have one element type.
    - `table` has rank 2.
    - The result type is `tensor<[shape of ids] x H x element type>`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$table, Piper_IndexTensor:$ids);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

def Piper_CrossEntropyOp : Piper_NNOp<"cross_entropy", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "mean softmax cross-entropy loss";
  let description = [{
    For `logits[N, V]` and class labels `labels[N]`:
    `result = (1 / N) * sum_n (lse(logits[n, :]) - logits[n, labels[n]])`,
    a rank-0 tensor, where `lse(r) = log(sum_v exp(r[v]))`. Labels lie in
    `[0, V)`; that is a property of the values and is not verified (there
    is no ignore index).

    Example:

    ```mlir
    %loss = piper.cross_entropy %logits, %labels : tensor<16x1000xf32>, tensor<16xi64> -> tensor<f32>
    ```

    **Constraints:**
    - `logits` and the result have one element type.
    - `logits` has rank 2 and `labels` rank 1.
    - Dim 0 of `labels` equals dim 0 of `logits`.
    - The result has rank 0.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$logits, Piper_IndexTensor:$labels);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

def Piper_ReshapeOp : Piper_NNOp<"reshape", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "reinterprets a tensor with a new static shape";
  let description = [{
    Returns the elements of `x` in row-major order under the result's
    shape.

    Example:

    ```mlir
    %r = piper.reshape %x : tensor<2x8x64xf32> -> tensor<16x64xf32>
    ```

    **Constraints:**
    - `x` and the result have one element type.
    - `x` and the result have static shapes.
    - `x` and the result have the same number of elements.
  }];
  let arguments = (ins Piper_FloatTensor:$x);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

def Piper_TransposeOp : Piper_NNOp<"transpose", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    Dim `d` of the result is dim `permutation[d]` of `x`: the result's
    element at index `(i_0, ..., i_(r-1))` is the element of `x` whose
    index along dim `permutation[d]` is `i_d`, for every `d`.

    Example:

    ```mlir
    %t = piper.transpose %x permutation = [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
    ```

    **Constraints:**
    - `x` and the result have one element type.
    - `permutation` has one entry per dim of `x`, each in `[0, rank)`,
      none repeated.
    - The result's dim `d` is dim `permutation[d]` of `x`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$x, DenseI64ArrayAttr:$permutation);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $x `permutation` `=` $permutation attr-dict `:` type($x) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

// The slot rule shared by dispatch, expert_ffn and combine.
defvar Piper_MoESlotRule = [{
    **Slots.** The router picks `k` experts for each of the `T` tokens, giving
    the pairs `(t, j)`, `0 <= t < T`, `0 <= j < k`. Pair `(t, j)` goes to
    expert `e = indices[t, j]` at slot `s` = the number of earlier pairs
    routed to `e`, where pairs are ordered by `t` ascending, then `j`
    ascending. Pairs with `s >= C` (the capacity) are dropped: dispatch
    writes nothing for them and combine adds 0 for them. Indices lie in
    `[0, E)`; that is a property of the values and is not verified.
}];

def Piper_RouterOp : Piper_NNOp<"router", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "top-k MoE router (Qwen3 style)";
  let description = [{
    For tokens `x[T, H]` and the router weight `w[H, E]`: computes the
    logits `x * w` (`[T, E]`), their softmax over the `E` experts, and, per
    token, the `top_k` experts with the largest probabilities, in
    descending order of probability (ties: lower expert index first).
    `indices[t, j]` is the `j`-th chosen expert and `weights[t, j]` its
    probability divided by the sum of the `top_k` chosen probabilities of
    token `t` (the weights of a token sum to 1, as Qwen3-MoE's
    `norm_topk_prob`). `piper.dispatch` describes how the chosen
    `(token, expert)` pairs map to capacity slots.

    Example:

    ```mlir
    %wts, %idx = piper.router %x, %w {top_k = 2 : i64} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
    ```

    **Constraints:**
    - `x`, `w` and `weights` have one element type.
    - `x` and `w` have rank 2.
    - Dim 1 of `x` equals dim 0 of `w`.
    - `top_k` >= 1 and, when dim 1 of `w` (E) is static, `top_k` <= E.
    - `weights` has type `tensor<T x top_k x element type>` and `indices`
      `tensor<T x top_k x i64>`.
    - Sizes are compared where both are static; a `?` matches any size.
  }];
  let arguments = (ins Piper_FloatTensor:$x, Piper_FloatTensor:$w,
                       I64Attr:$top_k);
  let results = (outs Piper_FloatTensor:$weights,
                      Piper_IndexTensor:$indices);
  let assemblyFormat = [{
    $x `,` $w attr-dict `:` type(operands) `->` type(results)
  }];
  let hasVerifier = 1;
}

def Piper_DispatchOp : Piper_NNOp<"dispatch", [
    Piper_DistributionRule<["inferLocalForm", "getCost",
        "getExpertExchanges"]>]> {
  let summary = "scatters routed tokens into per-expert capacity buffers";
  let description = !strconcat([{
    For tokens `x[T, H]` and the router's `indices[T, k]`, builds
    `buffer[E, C, H]` with `buffer[e, s, :] = x[t, :]` for every kept pair
    `(t, j)` at expert `e`, slot `s` (rule below); slots that receive no
    token are 0. `E` is dim 0 of the result type; `C` is `capacity`.
  }], Piper_MoESlotRule, [{
    Example:

    ```mlir
    %buf = piper.dispatch %x, %idx {capacity = 6 : i64} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf32>
    ```

    **Constraints:**
    - `x` and the result have one element type.
    - `x`, `indices` have rank 2 and the result rank 3.
    - Dim 0 of `indices` equals dim 0 of `x`.
    - `capacity` >= 1 and equals dim 1 of the result.
    - The result type is `tensor<E x capacity x H>` (dim 2 equals dim 1
      of `x`).
    - Sizes are compared where both are static; a `?` matches any size.
  }]);
  let arguments = (ins Piper_FloatTensor:$x, Piper_IndexTensor:$indices,
                       I64Attr:$capacity);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $indices attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Piper_ExpertFfnOp : Piper_NNOp<"expert_ffn", [
    Piper_DistributionRule<["inferLocalForm", "getCost",
        "getExpertWeightOperands", "getExpertExchanges"]>]> {
  let summary = "per-expert SwiGLU feed-forward network";
  let description = !strconcat([{
    Applies expert `e`'s SwiGLU FFN to its capacity buffer `buf[e]`
    (`[C, H]`):
    `result[e] = swiglu(buf[e] * w_gate[e], buf[e] * w_up[e]) * w_down[e]`
    with `w_gate[E, H, F]`, `w_up[E, H, F]`, `w_down[E, F, H]` (`*` the
    matrix product). Every slot is computed; an empty slot holds 0, so its
    result is 0.
  }], Piper_MoESlotRule, [{
    Example:

    ```mlir
    %y = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
    ```

    **Constraints:**
    - `buf`, `w_gate`, `w_up`, `w_down` and the result have one element
      type.
    - All operands have rank 3.
    - Dim 0 (E) of every weight equals dim 0 of `buf`.
    - Dim 1 of `w_gate` and of `w_up`, and dim 2 of `w_down`, equal dim 2
      of `buf` (H).
    - Dim 2 of `w_up` and dim 1 of `w_down` equal dim 2 of `w_gate` (F).
    - The result type is the type of `buf`.
    - Sizes are compared where both are static; a `?` matches any size.
  }]);
  let arguments = (ins Piper_FloatTensor:$buf, Piper_FloatTensor:$w_gate,
                       Piper_FloatTensor:$w_up, Piper_FloatTensor:$w_down);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $buf `,` $w_gate `,` $w_up `,` $w_down attr-dict `:` type(operands) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Piper_CombineOp : Piper_NNOp<"combine", [
    Piper_DistributionRule<["inferLocalForm", "getCost",
        "getExpertExchanges"]>]> {
  let summary = "gathers expert outputs back to tokens, weighted";
  let description = !strconcat([{
    For the expert outputs `y[E, C, H]` and the router's `weights[T, k]`
    and `indices[T, k]`:
    `result[t, :] = sum_j weights[t, j] * y[e, s, :]` over the kept pairs
    `(t, j)` at expert `e`, slot `s` (rule below; `C` is dim 1 of `y`).
    Dropped pairs add 0.
  }], Piper_MoESlotRule, [{
    Example:

    ```mlir
    %out = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<16x2xi64> -> tensor<16x64xf32>
    ```

    **Constraints:**
    - `y`, `weights` and the result have one element type.
    - `y` has rank 3; `weights` and `indices` rank 2.
    - `indices` has the dims of `weights`.
    - The result type is `tensor<T x H>` (dim 0 of `weights`, dim 2 of
      `y`).
    - Sizes are compared where both are static; a `?` matches any size.
  }]);
  let arguments = (ins Piper_FloatTensor:$y, Piper_FloatTensor:$weights,
                       Piper_IndexTensor:$indices);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = [{
    $y `,` $weights `,` $indices attr-dict `:` type(operands) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

def Piper_CastOp : Piper_NNOp<"cast", [
    Piper_DistributionRule<["inferLocalForm", "getCost"]>]> {
  let summary = "converts a tensor to another float element type";
  let description = [{
    Each element of `x` converted to the result's element type, rounded to
    the nearest representable value, ties to even (IEEE 754
    roundTiesToEven; a value beyond the result type's range becomes an
    infinity of its sign). Widening (`bf16` to `f32`, `f32` to `f64`) is
    exact. The shape does not change.

    Mixed precision (`--piper-mixed-precision`, docs/MixedPrecision.md)
    casts every f32 parameter (the master weight) to bf16 at its uses and
    the bf16 logits to f32 before the loss. The VJP of a cast is the cast
    of the cotangent back to the operand's type, so a gradient reaching an
    f32 master weight through its bf16 copy is f32.

    The op is not an `ElementwiseOpInterface` op: that interface's ops have
    one type throughout (operands, result and the generated kernel), while a
    cast's whole point is that the element type changes. Its distribution
    rule is the elementwise one with the result's element type: a device
    holding a shard of `x` casts that shard.

    Example:

    ```mlir
    %w16 = piper.cast %w : tensor<16x32xf32> -> tensor<16x32xbf16>
    ```

    **Constraints:**
    - `x` and the result have the same shape.
    - `x` and the result have different element types.
  }];
  let arguments = (ins Piper_FloatTensor:$x);
  let results = (outs Piper_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERNNOPS_TD
