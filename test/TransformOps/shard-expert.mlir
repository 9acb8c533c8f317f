// Expert parallelism on the tiny MoE (2 layers, 4 experts, T = 16 tokens,
// H = F = 16, f64) in two stages over dp = 2 x ep = 2. The generated model
// is placed over dp only; `ep` is added to its mesh, so the directive is
// what splits the expert weights.
// RUN: split-file %s %t
// RUN: piper-gen --config=tiny-moe --pp=2 --dtype=f64 --mesh=dp=2,pp=2 -o %t/gen.mlir
// RUN: sed 's/axes = \[dp = 2, pp = 2\]/axes = [dp = 2, pp = 2, ep = 2]/' %t/gen.mlir > %t/moe.mlir
// RUN: piper-opt %t/moe.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/ep-dp.mlir" --transform-interpreter -o %t/ep-dp.out.mlir
// RUN: FileCheck %s --input-file=%t/ep-dp.out.mlir
// RUN: piper-opt %t/ep-dp.out.mlir --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// The sharded DAG computes the same losses and gradients as the plain one
// (collectives are identities in the global view).
// RUN: piper-opt %t/moe.mlir --piper-autodiff --piper-build-dag -o %t/plain.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/ep.mlir" --transform-interpreter -o %t/sharded.mlir
// RUN: FileCheck %s --check-prefix=SHARDED --input-file=%t/sharded.mlir
// RUN: piper-interp %t/plain.mlir --steps=2 --print-grads > %t/plain.txt
// RUN: piper-interp %t/sharded.mlir --steps=2 --print-grads > %t/sharded.txt
// RUN: diff %t/plain.txt %t/sharded.txt
// RUN: FileCheck %s --check-prefix=STEP --input-file=%t/sharded.txt

// Expert weights are split on dim 0 (the experts) over ep; dense ones stay,
// and replicate records that they are replicated over dp and ep.
// CHECK: #piper.param<"layers.0.attn.wq", normal(0.02), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp, ep}>>
// CHECK: #piper.param<"layers.0.mlp.experts.w_gate", normal(0.02), placement = #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}>>

// Dense gradients are summed over dp x ep (every ep rank is a data-parallel
// replica of the dense layers), expert gradients over dp only.
// CHECK: piper.collective "all_reduce(BW{PP=0}#3)" all_reduce %{{.*}} over ["dp", "ep"] of @mesh stream "dp_grad" : tensor<16x4xf64>
// CHECK: piper.collective "all_reduce(BW{PP=0}#0)" all_reduce %{{.*}} over ["dp"] of @mesh stream "dp_grad" : tensor<4x16x16xf64>

// Forward: tokens go to their experts' owners after dispatch and come back
// before combine; the saved buffers are the ones each side uses later.
// CHECK-LABEL: func.func private @step.F.PP0
// CHECK:      piper.annotate {EP = 0}
// CHECK-NEXT:   %[[BUF:.*]] = piper.dispatch
// CHECK-NEXT:   %[[IN:.*]] = piper.collective "to_experts{PP=0,EP=0}" all_to_all %[[BUF]] over ["ep"] of @mesh stream "ep" : tensor<4x16x16xf64>
// CHECK-NEXT:   %[[Y:.*]] = piper.expert_ffn %[[IN]],
// CHECK-NEXT:   %[[OUT:.*]] = piper.collective "from_experts{PP=0,EP=0}" all_to_all %[[Y]] over ["ep"] of @mesh stream "ep" : tensor<4x16x16xf64>
// CHECK-NEXT:   %[[C:.*]] = piper.combine %[[OUT]],
// CHECK-NEXT:   piper.yield %[[C]], %[[OUT]], %[[IN]]

// BI: the expert outputs' cotangent goes to the experts, the dispatched
// buffer's cotangent comes back.
// CHECK-LABEL: func.func private @step.BI.PP1
// CHECK:      piper.annotate {EP = 1} pass = BI
// CHECK-NEXT:   %[[DY:.*]] = piper.vjp "piper.combine" wrt [0]
// CHECK-NEXT:   %[[DYE:.*]] = piper.collective "to_experts{PP=1,EP=1}" all_to_all %[[DY]] over ["ep"]
// CHECK-NEXT:   piper.vjp "piper.combine" wrt [1]
// CHECK-NEXT:   %[[DB:.*]] = piper.vjp "piper.expert_ffn" wrt [0] ({{.*}}) cotangents (%[[DYE]])
// CHECK-NEXT:   %[[DBT:.*]] = piper.collective "from_experts{PP=1,EP=1}" all_to_all %[[DB]] over ["ep"]
// CHECK-NEXT:   piper.vjp "piper.dispatch" wrt [0] ({{.*}}) cotangents (%[[DBT]])

// BW only uses values that already live with the experts.
// CHECK-LABEL: func.func private @step.BW.PP1
// CHECK-NOT:   piper.collective
// CHECK-LABEL: func.func private @step.BI.PP0

// Per device and step:
// - all_to_all: the buffer [E=4, C=16, H=16] f64 is 8192 B; each device
//   keeps 1/ep of it and sends (N-1)/N = 1/2: 4096 B, 4 per layer (F: in,
//   out; BI: in, out), 2 layers: 8 x 4096 = 32768.
// - expert gradients: 6 tensors of 8192 B, of which a device holds 1/ep =
//   4096 B; all-reduce over dp = 2 sends 2 (N-1)/N = 1 x that: 6 x 4096 =
//   24576.
// - dense gradients: 9424 - 6144 = 3280 parameters = 26240 B, all-reduced
//   over dp x ep = 4: 2 x 3/4 x 26240 = 39360.
// REPORT:      devices      kind            axes     stream      count          bytes
// REPORT-NEXT: all          all_reduce      dp       dp_grad         6          24576
// REPORT-NEXT: all          all_reduce      dp,ep    dp_grad        17          39360
// REPORT-NEXT: all          all_to_all      ep       ep              8          32768
// REPORT:      total all                      96704

// SHARDED: piper.collective "to_experts{PP=0,EP=0}" all_to_all
// STEP: step 1 loss
// STEP: grad layers.1.mlp.experts.w_down shape [4, 16, 16]
// STEP: step 2 loss

//--- ep-dp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %a2a = transform.piper.shard %all expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    %dense = transform.piper.replicate %all over @mesh ["dp", "ep"] where {EP = "none"} : (!transform.any_op) -> !transform.any_op
    %experts = transform.piper.replicate %all over @mesh ["dp"] where {EP = "*"} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- ep.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %a2a = transform.piper.shard %all expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
