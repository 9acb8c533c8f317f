// --piper-memory-plan holds a new elementwise op's activations per device
// from its interface alone: piper.sigmoid (defined by its ODS definition and
// interface methods, named by no analysis) between a column-split and a
// row-split linear keeps half of its 4 x 32 f64 values on each of tp = 2
// devices, like the linear output it reads.
//
// Saved by the forward: the head's logits [4, 8] 256 B, and for the VJPs
// the linear output h and the sigmoid's output s, [4, 32] 1024 B each:
// 2304 B whole, 256 + 512 + 512 = 1280 B over tp = 2.
//
// RUN: split-file %s %t
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer --piper-build-dag --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=TP1
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/tp.mlir" --transform-interpreter --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=TP2

// TP1:      max: params 6144 grads 6144 optimizer 12304 activations 2304 (1 microbatches)
// TP1:      [1-2] activations 256 F{PP=0}#1 (MB 0)
// TP1-NEXT: [1-3] activations 1024 F{PP=0}#2 (MB 0)
// TP1-NEXT: [1-2] activations 1024 F{PP=0}#3 (MB 0)

// TP2:      max: params 3072 grads 3072 optimizer 6160 activations 1280 (1 microbatches)
// TP2:      [1-2] activations 256 F{PP=0}#1 (MB 0)
// TP2-NEXT: [1-3] activations 512 F{PP=0}#2 (MB 0)
// TP2-NEXT: [1-2] activations 512 F{PP=0}#3 (MB 0)

//--- model.mlir
piper.mesh @mesh axes = [dp = 1, tp = 2]
func.func @step(%up: tensor<16x32xf64> {piper.param = #piper.param<"mlp.w_up", normal(0.5)>},
                %down: tensor<32x8xf64> {piper.param = #piper.param<"mlp.w_down", normal(0.5)>},
                %inputs: tensor<4x16xf64>, %labels: tensor<4xi64>) -> tensor<f64> {
  %loss = piper.annotate {PP = 0} -> tensor<f64> {
    %h = piper.linear %inputs, %up : tensor<4x16xf64>, tensor<16x32xf64> -> tensor<4x32xf64>
    %s = piper.sigmoid %h : tensor<4x32xf64>
    %o = piper.linear %s, %down : tensor<4x32xf64>, tensor<32x8xf64> -> tensor<4x8xf64>
    %l = piper.cross_entropy %o, %labels : tensor<4x8xf64>, tensor<4xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

//--- tp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %tp = transform.piper.shard %all tensor over @mesh ["tp"] column ["mlp.w_up"] row ["mlp.w_down"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
