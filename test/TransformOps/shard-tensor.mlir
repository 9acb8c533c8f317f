// Megatron tensor parallelism on the tiny GPT (2 layers, H = 16, 2 heads,
// FFN 32, T = 16 tokens, f64) over dp = 2 x tp = 2, with and without
// sequence parallelism.
// RUN: split-file %s %t
// RUN: piper-gen --config=tiny-gpt --dtype=f64 --mesh=dp=2,tp=2 -o %t/gpt.mlir
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/tp-dp.mlir" --transform-interpreter -o %t/tp-dp.out.mlir
// RUN: FileCheck %s --input-file=%t/tp-dp.out.mlir
// RUN: piper-opt %t/tp-dp.out.mlir --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-build-dag -o %t/plain.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/sp.mlir" --transform-interpreter -o %t/sp.out.mlir
// RUN: FileCheck %s --check-prefix=SP --input-file=%t/sp.out.mlir
// RUN: piper-opt %t/sp.out.mlir --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=SPREPORT
// Both compute the same losses and gradients as the plain DAG.
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/tp.mlir" --transform-interpreter -o %t/tp.out.mlir
// RUN: piper-interp %t/plain.mlir --steps=2 --print-grads > %t/plain.txt
// RUN: piper-interp %t/tp.out.mlir --steps=2 --print-grads > %t/tp.txt
// RUN: piper-interp %t/sp.out.mlir --steps=2 --print-grads > %t/sp.txt
// RUN: diff %t/plain.txt %t/tp.txt
// RUN: diff %t/plain.txt %t/sp.txt

// Column-parallel weights ([in, out]) are split on dim 1, row-parallel ones
// on dim 0; norms, embedding and head stay whole.
// CHECK: #piper.param<"layers.0.attn.wq", normal(0.02), placement = #piper.placement<@mesh, [{}, {tp}], replicated = {dp}>>
// CHECK: #piper.param<"layers.0.attn.wo", normal(0.02), placement = #piper.placement<@mesh, [{tp}, {}], replicated = {dp}>>
// CHECK: #piper.param<"layers.0.mlp_norm.weight", ones, placement = #piper.placement<@mesh, [{}], replicated = {dp}>>
// CHECK: #piper.param<"layers.0.mlp.w_down", normal(0.02), placement = #piper.placement<@mesh, [{tp}, {}], replicated = {dp}>>

// F: the row-parallel outputs are summed before the residual add.
// CHECK-LABEL: func.func private @step.F.PP0
// CHECK:      %[[O:.*]] = piper.linear %{{.*}}, %arg6 : tensor<16x16xf64>, tensor<16x16xf64> -> tensor<16x16xf64>
// CHECK-NEXT: %[[R:.*]] = piper.collective "all_reduce(layers.0.attn.wo)" all_reduce %[[O]] over ["tp"] of @mesh stream "tp" : tensor<16x16xf64>
// CHECK-NEXT: piper.add %{{.*}}, %[[R]]
// CHECK:      piper.collective "all_reduce(layers.0.mlp.w_down)" all_reduce

// BI: the partial input gradients of q, k and v are summed locally and
// all-reduced once.
// CHECK-LABEL: func.func private @step.BI.PP0
// CHECK:      piper.collective "all_reduce(d layers.1.mlp.w_up+d layers.1.mlp.w_gate)" all_reduce
// CHECK-NOT:  "all_reduce(d layers.1.attn.wq)"
// CHECK:      piper.collective "all_reduce(d layers.1.attn.wv+d layers.1.attn.wk+d layers.1.attn.wq)" all_reduce %{{.*}} over ["tp"]
// CHECK-LABEL: func.func private @step.BW.PP0
// CHECK-NOT:  piper.collective
// CHECK-LABEL: func.func private @step.UPD.PP0

// Per device and step:
// - tp: 2 all-reduces per layer in F (wo, w_down) and 2 in BI (q/k/v and
//   gate/up input gradients), of [16, 16] f64 = 2048 B, each sending
//   2 (N-1)/N = 1 x 2048 over tp = 2: 8 x 2048 = 16384.
// - dp: gradients at their per-device size. Split over tp: per layer
//   4 x 256 + 3 x 512 = 2560 elements, half on each device: 2 x 1280;
//   whole: embedding 512, head 512, norms 5 x 16 = 80. (2560 + 1104) x 8 B
//   = 29312, all-reduced over dp = 2 (factor 1): 29312.
// REPORT:      devices      kind            axes     stream      count          bytes
// REPORT-NEXT: all          all_reduce      dp       dp_grad        21          29312
// REPORT-NEXT: all          all_reduce      tp       tp              8          16384
// REPORT:      total all                      45696

// Sequence parallel: column inputs are gathered, row outputs
// reduce-scattered; BI gathers the row-parallel output cotangents, BW
// gathers the column inputs and row cotangents again.
// SP-LABEL: func.func private @step.F.PP0
// SP:      %[[X:.*]] = piper.collective "gather_tokens(layers.0.attn.wq)" all_gather %{{.*}} over ["tp"]
// SP-NEXT: piper.linear %[[X]], %arg3
// SP:      piper.linear %[[X]], %arg4
// SP:      piper.linear %[[X]], %arg5
// SP:      piper.collective "reduce_scatter(layers.0.attn.wo)" reduce_scatter
// SP-LABEL: func.func private @step.BI.PP0
// SP:      piper.collective "gather_tokens(layers.1.mlp.w_down)" all_gather
// SP:      piper.collective "reduce_scatter(d layers.1.mlp.w_up+d layers.1.mlp.w_gate)" reduce_scatter
// SP-LABEL: func.func private @step.BW.PP0
// SP:      piper.collective "gather_tokens(layers.0.attn.wv)" all_gather

// Each collective moves (N-1)/N x 2048 = 1024 B. Per layer: F 2 gathers +
// 2 scatters, BI 2 + 2, BW 4 gathers (column input of q/k/v and of
// gate/up, the cotangents of wo and w_down): 16 gathers and 8 scatters.
// SPREPORT:      all          all_gather      tp       tp             16          16384
// SPREPORT-NEXT: all          reduce_scatter  tp       tp              8           8192

//--- tp-dp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %tp = transform.piper.shard %all tensor over @mesh ["tp"] column ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"] row ["layers.*.attn.wo", "layers.*.mlp.w_down"] : (!transform.any_op) -> !transform.any_op
    %dp = transform.piper.replicate %all over @mesh ["dp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- tp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %tp = transform.piper.shard %all tensor over @mesh ["tp"] column ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"] row ["layers.*.attn.wo", "layers.*.mlp.w_down"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- sp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %tp = transform.piper.shard %all tensor over @mesh ["tp"] column ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"] row ["layers.*.attn.wo", "layers.*.mlp.w_down"] sequence_parallel : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
