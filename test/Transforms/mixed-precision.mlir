// RUN: piper-opt %s -split-input-file --piper-mixed-precision | FileCheck %s --enable-var-scope
// RUN: piper-opt %s -split-input-file --piper-mixed-precision="precision=f32" | FileCheck %s --check-prefix=F32
// RUN: piper-opt %s -split-input-file --piper-mixed-precision --piper-autodiff | FileCheck %s --check-prefix=GRAD --enable-var-scope
// RUN: piper-opt %s -split-input-file --piper-mixed-precision --piper-autodiff --piper-optimizer | FileCheck %s --check-prefix=STEP

// Parameters stay f32 and are cast to bf16 once per chunk, at their first
// use there; data too. Activations are bf16; the loss op computes and
// returns f32 from logits cast up. The signature does not change.

// CHECK-LABEL: func.func @two_stages(
// CHECK-SAME:    %[[W1:[^:]*]]: tensor<4x8xf32> {piper.param
// CHECK-SAME:    %[[W2:[^:]*]]: tensor<8x8xf32> {piper.param
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x4xf32>
// CHECK-SAME:    -> tensor<f32>
// CHECK:         %[[H:.*]] = piper.annotate {PP = 0} -> tensor<2x8xbf16> {
// CHECK-NEXT:      %[[X16:.*]] = piper.cast %[[X]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT:      %[[W116:.*]] = piper.cast %[[W1]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT:      %[[A:.*]] = piper.linear %[[X16]], %[[W116]] : tensor<2x4xbf16>, tensor<4x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:      %[[G:.*]] = piper.gelu %[[A]] : tensor<2x8xbf16>
// CHECK-NEXT:      piper.yield %[[G]] : tensor<2x8xbf16>
// CHECK:         %[[L:.*]] = piper.annotate {PP = 1} -> tensor<f32> {
// CHECK-NEXT:      %[[W216:.*]] = piper.cast %[[W2]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-NEXT:      %[[O:.*]] = piper.linear %[[H]], %[[W216]] : tensor<2x8xbf16>, tensor<8x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:      %[[O32:.*]] = piper.cast %[[O]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK-NEXT:      %[[CE:.*]] = piper.cross_entropy %[[O32]], %{{.*}} : tensor<2x8xf32>, tensor<2xi64> -> tensor<f32>
// CHECK-NEXT:      piper.yield %[[CE]] : tensor<f32>
// CHECK:         return %[[L]] : tensor<f32>

// An f32 policy changes nothing.
// F32-LABEL: func.func @two_stages(
// F32-NOT:     piper.cast
// F32:         piper.linear %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>

// The gradients of the master weights are f32: the VJP of each cast is the
// cast of the bf16 cotangent back up.
// GRAD-LABEL: func.func @two_stages(
// GRAD-SAME:    -> (tensor<f32>, tensor<4x8xf32> {piper.grad = "w1"}, tensor<8x8xf32> {piper.grad = "w2"})
// GRAD:         %[[DW1:.*]] = piper.vjp "piper.linear" wrt [1] {{.*}} -> tensor<4x8xbf16>
// GRAD-NEXT:    %[[DW1F:.*]] = piper.cast %[[DW1]] : tensor<4x8xbf16> -> tensor<4x8xf32>

// AdamW state and updates are f32 (the master weights' type).
// STEP-LABEL: func.func @two_stages(
// STEP-SAME:    tensor<4x8xf32> {piper.state = #piper.state<"w1", "exp_avg">}
// STEP:         piper.adamw_update {{.*}} : tensor<4x8xf32>
// STEP:         piper.adamw_update {{.*}} : tensor<8x8xf32>
func.func @two_stages(%w1: tensor<4x8xf32> {piper.param = #piper.param<"w1", normal(0.02)>},
                      %w2: tensor<8x8xf32> {piper.param = #piper.param<"w2", normal(0.02)>},
                      %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.annotate {PP = 0} -> tensor<2x8xf32> {
    %a = piper.linear %x, %w1 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
    %r = piper.gelu %a : tensor<2x8xf32>
    piper.yield %r : tensor<2x8xf32>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f32> {
    %o = piper.linear %h, %w2 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
    %l = piper.cross_entropy %o, %labels : tensor<2x8xf32>, tensor<2xi64> -> tensor<f32>
    piper.yield %l : tensor<f32>
  }
  return %loss : tensor<f32>
}

// -----

// A parameter used twice in one block is cast once; float constants are
// cast at their use like data.
// CHECK-LABEL: func.func @shared_use(
// CHECK-SAME:    %[[W:[^:]*]]: tensor<4x4xf32>
// CHECK:         %[[W16:.*]] = piper.cast %[[W]] : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT:    %[[C16:.*]] = piper.cast %[[C]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT:    %[[A:.*]] = piper.linear %[[C16]], %[[W16]]
// CHECK-NEXT:    %[[B:.*]] = piper.linear %[[A]], %[[W16]]
// CHECK-NOT:     piper.cast %[[W]]
// CHECK:         piper.cast %[[B]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK:         piper.cross_entropy
// A MoE block: the router's i64 indices keep their type.
// CHECK-LABEL: func.func @moe(
// CHECK:         piper.router %{{.*}}, %{{.*}} {top_k = 2 : i64} : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x2xbf16>, tensor<8x2xi64>
// CHECK:         piper.dispatch {{.*}} -> tensor<4x4x16xbf16>
// CHECK:         piper.expert_ffn {{.*}} -> tensor<4x4x16xbf16>
// CHECK:         piper.combine {{.*}} -> tensor<8x16xbf16>
func.func @shared_use(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.1)>},
                      %labels: tensor<2xi64>) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<2x4xf32>
  %a = piper.linear %c, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %b = piper.linear %a, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = piper.cross_entropy %b, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @moe(%x: tensor<8x16xf32>, %wr: tensor<16x4xf32> {piper.param = #piper.param<"wr", normal(0.1)>},
               %wg: tensor<4x16x8xf32> {piper.param = #piper.param<"wg", normal(0.1)>},
               %wu: tensor<4x16x8xf32> {piper.param = #piper.param<"wu", normal(0.1)>},
               %wd: tensor<4x8x16xf32> {piper.param = #piper.param<"wd", normal(0.1)>},
               %labels: tensor<8xi64>) -> tensor<f32> {
  %wts, %idx = piper.router %x, %wr {top_k = 2 : i64} : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x2xf32>, tensor<8x2xi64>
  %buf = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<8x16xf32>, tensor<8x2xi64> -> tensor<4x4x16xf32>
  %y = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<4x4x16xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x8x16xf32> -> tensor<4x4x16xf32>
  %out = piper.combine %y, %wts, %idx : tensor<4x4x16xf32>, tensor<8x2xf32>, tensor<8x2xi64> -> tensor<8x16xf32>
  %l = piper.cross_entropy %out, %labels : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  return %l : tensor<f32>
}
