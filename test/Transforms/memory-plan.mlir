// RUN: split-file %s %t
//
// ZeRO-0..3 over dp = 4 on a 2-layer MLP with AdamW, unplaced (one group,
// every device): w1 8x4 f64 (256 B), w2 4x4 f64 (128 B), P = 384 B; AdamW
// keeps exp_avg and exp_avg_sq (2P) and an i64 step counter (8 B) per
// parameter. The model's placement carries the stage (ZeRO-1 and ZeRO-2
// have the same collectives; `zero = 1` tells them apart).
// RUN: sed 's/ZERO/0/' %t/model.mlir > %t/m0.mlir
// RUN: sed 's/ZERO/1/' %t/model.mlir > %t/m1.mlir
// RUN: sed 's/ZERO/2/' %t/model.mlir > %t/m2.mlir
// RUN: sed 's/ZERO/3/' %t/model.mlir > %t/m3.mlir
// RUN: sed 's/ZERO/0/' %t/zero.mlir > %t/z0.mlir
// RUN: sed 's/ZERO/1/' %t/zero.mlir > %t/z1.mlir
// RUN: sed 's/ZERO/2/' %t/zero.mlir > %t/z2.mlir
// RUN: sed 's/ZERO/3/' %t/zero.mlir > %t/z3.mlir
// RUN: piper-opt %t/m0.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/z0.mlir" --transform-interpreter -o %t/zero0.dag.mlir
// RUN: piper-opt %t/zero0.dag.mlir --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=ZERO0
// RUN: piper-opt %t/m1.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/z1.mlir" --transform-interpreter --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=ZERO1
// RUN: piper-opt %t/m2.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/z2.mlir" --transform-interpreter --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=ZERO2
// RUN: piper-opt %t/m3.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/z3.mlir" --transform-interpreter --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=ZERO3
//
// A budget at the peak passes; one byte less is an error at the peak node.
// RUN: piper-opt %t/zero0.dag.mlir --piper-memory-plan=budget=1752 -o /dev/null | FileCheck %s --check-prefix=BUDGETOK
// RUN: not piper-opt %t/zero0.dag.mlir --piper-memory-plan=budget=1751 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
//
// GPipe vs 1F1B on a generated 4-stage MLP (one linear layer of 32 x 32
// f64 per stage), 8 microbatches of 4 rows, stage s on {pp = s}: GPipe
// keeps all m = 8 microbatches' activations on every rank, 1F1B
// min(m, p - r) = 4, 3, 2, 1 on rank r.
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=4 -o %t/mlp4.mlir
// RUN: sed 's/SCHEDULE/gpipe/' %t/pipeline.mlir > %t/gpipe.mlir
// RUN: sed 's/SCHEDULE/1f1b/' %t/pipeline.mlir > %t/1f1b.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/gpipe.mlir" --transform-interpreter --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter --piper-memory-plan=list-buffers -o /dev/null | FileCheck %s --check-prefix=ONEF

// ZeRO-0: params P = 384, grads P = 384 (both live once BW{PP=0} has run:
// the updates come after the last backward), optimizer 2P + 16 = 784. The
// peak is at BW{PP=0}: the above plus the input x (2x8, 128 B), the input
// gradient BI{PP=0} hands it (64 B) and the loss (8 B): 1752. The
// all-reduces work in place; updates write into the parameters and state.
// ZERO0:      memory plan of @mlp (bytes per device)
// ZERO0-NEXT: all: peak 1752 at step 7 of 10 'BW{PP=0}'
// ZERO0-NEXT:   params 384 grads 384 optimizer 784 activations 0 comm 0 other 200
// ZERO0-NEXT:   max: params 384 grads 384 optimizer 784 activations 192 (1 microbatches) comm 0 other 280
// ZERO0-NEXT:   reuse: 11 buffers in 10 allocations, 2024 bytes reserved
// Saved for backward: gelu's input and output of stage 0 (64 B each; the
// output is stage 1's linear input) and the softmax of the loss (64 B).
// ZERO0-NEXT:     [1-4] activations 64 F{PP=0}#0 (MB 0)
// ZERO0-NEXT:     [1-6] activations 64 F{PP=0}#1 (MB 0)
// ZERO0:          [4-10] grads 128 BW{PP=1}#0
// ZERO0:          [7-9] grads 256 BW{PP=0}#0
// ZERO0:          [1-10] params 256 w1
// ZERO0-NEXT:     [1-10] params 128 w2
// ZERO0:          [1-10] optimizer 8 w1.step
// ZERO0-NEXT:     [1-10] optimizer 256 w1.exp_avg
// ZERO0-NEXT:     [1-10] optimizer 256 w1.exp_avg_sq

// ZeRO-1: optimizer state 2P/4 + 16 = 208; gradients stay full (the
// reduce-scatter leaves each device's shard inside its full buffer).
// ZERO1:      all: peak 1176 at step 7 of 12 'BW{PP=0}'
// ZERO1-NEXT:   params 384 grads 384 optimizer 208 activations 0 comm 0 other 200

// ZeRO-2: a full gradient lives only until its reduce-scatter, the shards
// P/4 = 96 until the updates. Most gradient bytes at once: at the
// reduce-scatter of w1, its full gradient (256), its shard (64) and w2's
// shard (32): P/4 + the largest full gradient = 352.
// ZERO2:      all: peak 1112 at step 4 of 12 'BW{PP=1}'
// ZERO2-NEXT:   params 384 grads 128 optimizer 208 activations 128 comm 0 other 264
// ZERO2-NEXT:   max: params 384 grads 352 optimizer 208
// ZERO2:          [4-5] grads 128 BW{PP=1}#0
// ZERO2-NEXT:     [5-11] grads 32 reduce_scatter(BW{PP=1}#0)#0
// ZERO2:          [7-8] grads 256 BW{PP=0}#0
// ZERO2-NEXT:     [8-9] grads 64 reduce_scatter(BW{PP=0}#0)#0

// ZeRO-3: parameter shards P/4 = 96; each gathered copy lives from its
// gather to the node using it, and is gathered one task ahead (during the
// task before its consumer, as the programs prefetch it). Most parameter
// bytes: during F{PP=0}, 96 + its own w1 (256) + w2 for F{PP=1} (128) =
// 480.
// ZERO3:      all: peak 960 at step 3 of 13 'F{PP=0}'
// ZERO3-NEXT:   params 480 grads 0 optimizer 208 activations 128 comm 0 other 144
// ZERO3-NEXT:   max: params 480 grads 352 optimizer 208
// ZERO3:          [1-3] params 256 all_gather(w1)->F{PP=0}#0
// ZERO3-NEXT:     [2-5] params 128 all_gather(w2)->F{PP=1}#0
// ZERO3:          [4-6] params 128 all_gather(w2)->BI{PP=1}#0
// ZERO3:          [1-13] params 64 w1
// ZERO3:          [1-13] params 32 w2

// BUDGETOK: all: peak 1752 at step 7 of 10 'BW{PP=0}'
// BUDGET: error: device group all needs 1752 bytes at its peak (step 7 of 10, 'BW{PP=0}'), over the budget of 1751 bytes

// One microbatch's saved activations, M_B: on stage 0 gelu's input (4x32
// f64, 1024 B; the input rows are a microbatch slice, counted as other);
// on stages 1 and 2 also the received input of the linear (2048 B); on
// stage 3 the received input, the logits' softmax and gelu's input
// (3328 B).
// GPIPE:      pp=0: peak
// GPIPE:        max: {{.*}} activations 8192 (8 microbatches)
// GPIPE:      pp=1: peak
// GPIPE:        max: {{.*}} activations 16384 (8 microbatches)
// GPIPE:      pp=2: peak
// GPIPE:        max: {{.*}} activations 16384 (8 microbatches)
// GPIPE:      pp=3: peak
// GPIPE:        max: {{.*}} activations 26624 (8 microbatches)

// ONEF:      pp=0: peak
// ONEF:        max: {{.*}} activations 4096 (4 microbatches)
// The peak is the second weight gradient: the running sum (P) and the
// microbatch's own gradient (P), added into it right after.
// ONEF:      pp=1: peak 48400 at step 20 of 59 'BW{PP=1,MB=1}'
// ONEF-NEXT:   params 8448 grads 16896 optimizer 16912 activations 5120 comm 0 other 1024
// ONEF-NEXT:   max: {{.*}} grads 16896 {{.*}} activations 6144 (3 microbatches)
// Rank 1 receives microbatch 3's input only after the backward of
// microbatch 0 freed its activations; the gradients accumulate into one
// buffer per parameter from the first weight gradient on, and each later
// microbatch's gradient lives for its BW only.
// ONEF:          [1-13] activations 1024 F{PP=0,MB=0}#0->{pp=1}#0 (MB 0)
// ONEF:          [13-59] grads 8192 accumulate(BW{PP=1}#0)#0
// ONEF-NEXT:     [13-59] grads 256 accumulate(BW{PP=1}#1)#0
// ONEF-NEXT:     [14-34] activations 1024 F{PP=0,MB=3}#0->{pp=1}#0 (MB 3)
// ONEF:          [20-20] grads 8192 BW{PP=1,MB=1}#0
// ONEF-NEXT:     [27-27] grads 8192 BW{PP=1,MB=2}#0
// ONEF:          [20-20] grads 256 BW{PP=1,MB=1}#1
// ONEF:          [56-56] grads 256 BW{PP=1,MB=7}#1
// ONEF:      pp=2: peak
// ONEF:        max: {{.*}} activations 4096 (2 microbatches)
// ONEF:      pp=3: peak
// ONEF:        max: {{.*}} activations 3328 (1 microbatches)

//--- model.mlir
piper.mesh @mesh axes = [dp = 4]
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = ZERO>>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = ZERO>>},
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

//--- zero.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %all over @mesh ["dp"] zero = ZERO : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- pipeline.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 8 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 2} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 3} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "SCHEDULE" in %root : !transform.any_op
    transform.yield
  }
}
