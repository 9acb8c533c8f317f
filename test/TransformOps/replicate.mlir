// RUN: split-file %s %t
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/dp.mlir" --transform-interpreter -o %t/dp.out.mlir
// RUN: FileCheck %s --check-prefix=DP --input-file=%t/dp.out.mlir
// RUN: piper-opt %t/dp.out.mlir --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=DPREPORT
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/zero2.mlir" --transform-interpreter --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=ZERO2
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/zero1.mlir" --transform-interpreter -o %t/zero1.out.mlir
// RUN: FileCheck %s --check-prefix=ZERO1 --input-file=%t/zero1.out.mlir
// RUN: piper-opt %t/zero1.out.mlir --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=ZERO1REPORT
// RUN: sed 's/bucket_size = 400/bucket_size = 300/' %t/zero1.mlir > %t/bucket300.mlir
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/bucket300.mlir" --transform-interpreter --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=BUCKET300
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/zero3.mlir" --transform-interpreter -o %t/zero3.out.mlir
// RUN: FileCheck %s --check-prefix=ZERO3 --input-file=%t/zero3.out.mlir
// RUN: piper-opt %t/zero3.out.mlir --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=ZERO3REPORT
// A DAG with ZeRO-3 gathers computes the same losses and gradients as the
// plain one (collectives are identities in the global view).
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag -o %t/plain.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/zero3.mlir" --transform-interpreter -o %t/gathered.mlir
// RUN: FileCheck %s --check-prefix=GATHERED --input-file=%t/gathered.mlir
// RUN: piper-interp %t/plain.mlir --steps=2 --print-grads > %t/plain.txt
// RUN: piper-interp %t/gathered.mlir --steps=2 --print-grads > %t/gathered.txt
// RUN: diff %t/plain.txt %t/gathered.txt
// RUN: FileCheck %s --check-prefix=STEP --input-file=%t/gathered.txt
// Data parallelism over dp = 4 on two placed stages, w1: 8x4 f64 (256 B),
// w2: 4x4 f64 (128 B).

// Each gradient is all-reduced on its stage, right before its update.
// DP:      %[[G1:.*]] = piper.task "BW{PP=1}"
// DP:      %[[G0:.*]] = piper.task "BW{PP=0}"
// DP-NEXT: %[[R0:.*]] = piper.collective "all_reduce(BW{PP=0}#0)" all_reduce %[[G0]] over ["dp"] of @mesh stream "dp_grad" {devices = {pp = 0 : i64}} : tensor<8x4xf64>
// DP-NEXT: piper.task "UPD{PP=0}" @mlp.UPD.PP0(%{{.*}}, %[[R0]], %{{.*}})
// DP-NEXT: %[[R1:.*]] = piper.collective "all_reduce(BW{PP=1}#0)" all_reduce %[[G1]] over ["dp"] of @mesh stream "dp_grad" {devices = {pp = 1 : i64}} : tensor<4x4xf64>
// DP-NEXT: piper.task "UPD{PP=1}" @mlp.UPD.PP1(%{{.*}}, %[[R1]], %{{.*}})

// Ring all-reduce sends 2 (N-1)/N of the bytes: 2 * 3/4 * 256 = 384 on
// stage 0, 2 * 3/4 * 128 = 192 on stage 1; the activation (2x4 f64) and its
// gradient cross the stages once each.
// DPREPORT:      devices      kind            axes     stream      count          bytes
// DPREPORT-NEXT: pp=0         all_reduce      dp       dp_grad         1            384
// DPREPORT-NEXT: pp=0         send            -        pp              1             64
// DPREPORT-NEXT: pp=1         all_reduce      dp       dp_grad         1            192
// DPREPORT-NEXT: pp=1         send            -        pp              1             64
// DPREPORT:      total all                        704

// ZeRO-2 reduce-scatters instead, (N-1)/N of the bytes, updates the shard
// and all-gathers the updated parameter, (N-1)/N again: the same 2 (N-1)/N
// as plain data parallelism.
// ZERO2: total all_gather                     288
// ZERO2: total reduce_scatter                 288

// ZeRO-1 moves what ZeRO-2 does. With 400-byte buckets both gradients
// (w2's 128 B, produced first, then w1's 256 B) share one reduce-scatter
// call; with 300-byte buckets w1 no longer fits beside w2.
// The stage (here replacing the model's zero = 3) is recorded on the
// parameter, where memory planning reads it.
// ZERO1:      #piper.param<"w1", normal(0.1), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 1>>
// ZERO1:      %[[RS:.*]] = piper.collective "reduce_scatter(BW{PP=0}#0)" reduce_scatter %{{.*}} over ["dp"] of @mesh stream "dp_grad" {bucket = 0 : i64}
// ZERO1:      %[[UPD:.*]]:2 = piper.task "UPD{PP=0}" @mlp.UPD.PP0(%{{.*}}, %[[RS]], %{{.*}})
// ZERO1-NEXT: %[[AG:.*]] = piper.collective "all_gather(UPD{PP=0}#0)" all_gather %[[UPD]]#0 over ["dp"] of @mesh stream "dp_param" : tensor<8x4xf64>
// ZERO1:      piper.dag_yield %{{.*}}, %[[AG]], %[[UPD]]#1,
// ZERO1REPORT:      all          all_gather      dp       dp_param        2            288
// ZERO1REPORT-NEXT: all          reduce_scatter  dp       dp_grad         1            288
// BUCKET300: all          reduce_scatter  dp       dp_grad         2            288

// ZeRO-3 also gathers each parameter before every node that needs its
// value: w2 for F and BI of stage 1 (its input gradient needs it), w1 only
// for F (the first layer's input gradient is not needed), and neither for
// BW (a linear layer's weight gradient needs the input, not the weight).
// So w2 moves the textbook 3 x bytes x (N-1)/N (2 gathers + 1 scatter) and
// w1 two thirds of it: gathers 3/4 * (256 + 2 * 128) = 384.
// ZERO3:     piper.collective "all_gather(w1)->F{PP=0}" all_gather %arg0 over ["dp"] of @mesh stream "dp_param"
// ZERO3-NOT: all_gather(w1)->BW
// ZERO3:     piper.collective "all_gather(w2)->F{PP=1}"
// ZERO3:     piper.collective "all_gather(w2)->BI{PP=1}"
// ZERO3-NOT: all_gather(w2)->BW
// ZERO3REPORT: total all_gather                     384
// ZERO3REPORT: total reduce_scatter                 288

// GATHERED: piper.collective "all_gather(w2)->F{PP=1}" all_gather
// STEP: step 2 loss

//--- model.mlir
piper.mesh @mesh axes = [dp = 4, pp = 2]
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 3>>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 3>>},
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

//--- dp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %all over @mesh ["dp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- zero1.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %all over @mesh ["dp"] zero = 1 bucket_size = 400 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- zero2.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %all over @mesh ["dp"] zero = 2 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- zero3.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %all over @mesh ["dp"] zero = 3 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
