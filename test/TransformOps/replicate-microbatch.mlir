// RUN: split-file %s %t
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/zero2.mlir" --transform-interpreter -o %t/zero2.out.mlir
// RUN: FileCheck %s --check-prefix=ZERO2 --input-file=%t/zero2.out.mlir
// RUN: sed 's/zero = 2/zero = 1/' %t/zero2.mlir > %t/zero1.mlir
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/zero1.mlir" --transform-interpreter -o %t/zero1.out.mlir
// RUN: FileCheck %s --check-prefix=ZERO1 --input-file=%t/zero1.out.mlir
// With a 300-byte bucket, w1's gradient (256 B) and b1's (32 B) share one.
// RUN: sed 's/zero = 2/zero = 2 bucket_size = 300/' %t/zero2.mlir > %t/bucket.mlir
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/bucket.mlir" --transform-interpreter -o %t/bucket.out.mlir
// RUN: FileCheck %s --check-prefix=BUCKET --input-file=%t/bucket.out.mlir
// Resharding per microbatch computes what one reduce-scatter per step does
// (collectives are identities in the global view).
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag -o %t/plain.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/zero1.mlir" --transform-interpreter -o %t/step.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/zero2.mlir" --transform-interpreter -o %t/resharded.mlir
// RUN: piper-interp %t/step.mlir --steps=2 > %t/step.txt
// RUN: piper-interp %t/resharded.mlir --steps=2 > %t/resharded.txt
// RUN: %numdiff %t/step.txt %t/resharded.txt

// ZeRO-2 under split over 2 microbatches: stage 0's weight-gradient node
// (w1 8x4 and b1 4, f64) becomes one node per gradient (the second named
// `.b1`, calling a copy of the body that computes only b1's gradient), and
// every microbatch's gradient is reduce-scattered as soon as it exists; the
// accumulator sums the shards and feeds the update.
// ZERO2-DAG: func.func private @mlp.BW.PP0.bucket(%{{.*}}) -> tensor<8x4xf64>
// ZERO2-DAG: func.func private @mlp.BW.PP0.bucket_1(%{{.*}}) -> tensor<4xf64>
// ZERO2-DAG: %[[W0:.*]] = piper.task "BW{PP=0,MB=0}" @mlp.BW.PP0.bucket(
// ZERO2-DAG: %[[B0:.*]] = piper.task "BW{PP=0,MB=0}.b1" @mlp.BW.PP0.bucket_1(
// ZERO2-DAG: %[[RW0:.*]] = piper.collective "reduce_scatter(BW{PP=0,MB=0}#0)" reduce_scatter %[[W0]] over ["dp"]
// ZERO2-DAG: %[[RB0:.*]] = piper.collective "reduce_scatter(BW{PP=0,MB=0}.b1#0)" reduce_scatter %[[B0]] over ["dp"]
// ZERO2-DAG: %[[W1:.*]] = piper.task "BW{PP=0,MB=1}" @mlp.BW.PP0.bucket(
// ZERO2-DAG: %[[RW1:.*]] = piper.collective "reduce_scatter(BW{PP=0,MB=1}#0)" reduce_scatter %[[W1]] over ["dp"]
// ZERO2-DAG: %[[ACC:.*]] = piper.accumulate "accumulate(BW{PP=0}#0)" %[[RW0]], %[[RW1]] scale 5.000000e-01
// ZERO2-DAG: piper.task "UPD{PP=0}" @mlp.UPD.PP0(%{{.*}}, %[[ACC]],
// ZERO2-NOT: reduce_scatter(accumulate

// ZeRO-1 keeps one reduce-scatter of each full accumulator per step.
// ZERO1: %[[ACC:.*]] = piper.accumulate "accumulate(BW{PP=0}#0)"
// ZERO1: piper.collective "reduce_scatter(accumulate(BW{PP=0}#0)#0)" reduce_scatter %[[ACC]]
// ZERO1-NOT: .b1"

// BUCKET-NOT: "BW{PP=0,MB=0}.b1"
// BUCKET: piper.collective "reduce_scatter(BW{PP=0,MB=0}#1)" reduce_scatter

//--- model.mlir
piper.mesh @mesh axes = [dp = 4, pp = 2]
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %b1: tensor<4xf64> {piper.param = #piper.param<"b1", zeros>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<4x8xf64>, %labels: tensor<4xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<4x4xf64> {
    %a = piper.linear %x, %w1, %b1 : tensor<4x8xf64>, tensor<8x4xf64>, tensor<4xf64> -> tensor<4x4xf64>
    %r = piper.gelu %a : tensor<4x4xf64>
    piper.yield %r : tensor<4x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<4x4xf64>, tensor<4xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

//--- zero2.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %nodes = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %nodes over @mesh ["dp"] zero = 2 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
