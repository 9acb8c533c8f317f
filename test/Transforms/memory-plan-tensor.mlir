// --piper-memory-plan counts what one device holds of the activations of a
// tensor-parallel (Megatron) strategy: the global view keeps bodies at
// global shapes, but a column-parallel linear's output, the attention over
// half the heads and the swiglu of split channels are held at 1/tp.
//
// Tiny GPT (f64): 2 layers, T = 16 tokens, H = 16, 2 heads, FFN 32,
// vocabulary 32; one forward node, so every forward output a backward
// reads is an activation. Its 25 saved values:
//   whole: logits [16, 32] 4096, and 10 of [16, 16] (the embedding and its
//     reshape, the residual sums, the norms' outputs) 2048 each: 24576;
//   per layer: swiglu's output, gate and up [16, 32] 4096 each, the
//     attention's output (reshaped) and q, k, v [16, 16] 2048 each:
//     3 x 4096 + 4 x 2048 = 20480, 2 layers 40960.
// Unsharded: 24576 + 40960 = 65536. Over tp = 2 the per-layer values are
// halved: 24576 + 40960 / 2 = 45056.
//
// RUN: split-file %s %t
// RUN: piper-gen --config=tiny-gpt --dtype=f64 --mesh=tp=2 -o %t/gpt.mlir
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-optimizer --piper-build-dag --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=TP1
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/tp.mlir" --transform-interpreter --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=TP2

// TP1: max: params 49792 grads 49792 optimizer 99752 activations 65536 (1 microbatches)

// Parameters and their gradients were already per device (the split
// weights half); activations now are too.
// TP2: max: params 29312 grads 29312 optimizer 58792 activations 45056 (1 microbatches)
// The logits stay whole; swiglu, gate and up of layer 1 are halved; so are
// the attention output and q, k, v.
// TP2:      [1-2] activations 4096 F{PP=0}#1 (MB 0)
// TP2-NEXT: [1-3] activations 2048 F{PP=0}#2 (MB 0)
// TP2-NEXT: [1-3] activations 2048 F{PP=0}#3 (MB 0)
// TP2-NEXT: [1-3] activations 2048 F{PP=0}#4 (MB 0)
// TP2-NEXT: [1-2] activations 2048 F{PP=0}#5 (MB 0)
// TP2-NEXT: [1-2] activations 2048 F{PP=0}#6 (MB 0)
// TP2-NEXT: [1-3] activations 2048 F{PP=0}#7 (MB 0)
// TP2-NEXT: [1-3] activations 2048 F{PP=0}#8 (MB 0)
// TP2-NEXT: [1-3] activations 1024 F{PP=0}#9 (MB 0)
// TP2-NEXT: [1-2] activations 1024 F{PP=0}#10 (MB 0)
// TP2-NEXT: [1-2] activations 1024 F{PP=0}#11 (MB 0)
// TP2-NEXT: [1-2] activations 1024 F{PP=0}#12 (MB 0)

//--- tp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %tp = transform.piper.shard %all tensor over @mesh ["tp"] column ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"] row ["layers.*.attn.wo", "layers.*.mlp.w_down"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
