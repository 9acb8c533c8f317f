// RUN: split-file %s %t
// --piper-build-dag=fuse-backward makes one B node per chunk whose body
// calls the chunk's BI and BW bodies.
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag=fuse-backward -o %t/fused.mlir
// RUN: FileCheck %s --check-prefix=FUSED --input-file=%t/fused.mlir
// split_backward (after split, so per microbatch) gives BI and BW nodes.
// RUN: piper-opt %t/fused.mlir --transform-preload-library="transform-library-paths=%t/split.mlir" --transform-interpreter -o %t/split.mlir.out
// RUN: FileCheck %s --check-prefix=SPLIT --input-file=%t/split.mlir.out
// All three forms compute the same step, bit for bit.
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag -o %t/plain.mlir
// RUN: piper-interp %t/plain.mlir --steps=2 --print-grads > %t/plain.txt
// RUN: piper-interp %t/fused.mlir --steps=2 --print-grads > %t/fused.txt
// RUN: piper-opt %t/fused.mlir --transform-preload-library="transform-library-paths=%t/only.mlir" --transform-interpreter -o %t/resplit.mlir
// RUN: piper-interp %t/resplit.mlir --steps=2 --print-grads > %t/resplit.txt
// RUN: diff %t/plain.txt %t/fused.txt
// RUN: diff %t/plain.txt %t/resplit.txt

// FUSED:      %[[F0:.*]]:2 = piper.task "F{PP=0}"
// FUSED:      %[[F1:.*]]:2 = piper.task "F{PP=1}"
// FUSED-NEXT: %[[B1:.*]]:2 = piper.task "B{PP=1}" @mlp.B.PP1(%[[F1]]#1, %{{.*}}, %[[F0]]#0, %{{.*}}) {pass = #piper<pass B>, tags = {PP = 1 : i64}}
// FUSED-NEXT: %[[B0:.*]] = piper.task "B{PP=0}" @mlp.B.PP0(%[[F0]]#1, %[[B1]]#0, %{{.*}}, %{{.*}}) {pass = #piper<pass B>, tags = {PP = 0 : i64}}
// FUSED-NEXT: piper.dag_yield %[[F1]]#0, %[[B0]], %[[B1]]#1
// What BI hands to BW stays inside the fused body.
// FUSED:      func.func private @mlp.B.PP1(
// FUSED-NEXT:   %[[I:.*]]:2 = call @mlp.BI.PP1(
// FUSED-NEXT:   %[[W:.*]] = call @mlp.BW.PP1(%{{.*}}, %{{.*}}, %[[I]]#0)
// FUSED-NEXT:   return %[[I]]#1, %[[W]]

// SPLIT:      %[[BI:.*]]:2 = piper.task "BI{PP=1,MB=0}" @mlp.BI.PP1(
// SPLIT-NEXT: %[[BW:.*]] = piper.task "BW{PP=1,MB=0}" @mlp.BW.PP1(%{{.*}}, %{{.*}}, %[[BI]]#0) {pass = #piper<pass BW>, tags = {MB = 0 : i64, PP = 1 : i64}}
// SPLIT:      piper.task "BI{PP=0,MB=0}" @mlp.BI.PP0(%{{.*}}, %[[BI]]#1)
// SPLIT:      piper.task "BW{PP=1,MB=1}"
// SPLIT-NOT:  piper.task "B{

//--- model.mlir
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %a = piper.linear %x, %w1 : tensor<2x8xf64>, tensor<8x4xf64> -> tensor<2x4xf64>
    %r = piper.gelu %a : tensor<2x4xf64>
    piper.yield %r : tensor<2x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

//--- split.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    %b = transform.piper.match_nodes {PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %parts = transform.piper.split_backward %b : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- only.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %b = transform.piper.match_nodes {PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %parts = transform.piper.split_backward %b : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
