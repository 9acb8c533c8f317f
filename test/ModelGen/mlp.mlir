// RUN: piper-gen --config=tiny-mlp --pp=2 | FileCheck %s
// RUN: piper-gen --model=mlp --pp=2 --dtype=f64 | piper-opt --piper-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: piper-gen --config=tiny-mlp --mesh=dp=4 --zero=2 | piper-opt --piper-print-summary -o /dev/null | FileCheck %s --check-prefix=SUMMARY
// The MLP: float inputs [B, In], (linear + relu) per hidden layer, a linear
// head and the cross-entropy loss; weights normal(0.02), biases zeros.

// Parameters first, in layer order, then the inputs and the labels.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[W0:[^:]*]]: tensor<16x32xf32> {piper.param = #piper.param<"layers.0.weight", normal(0.02)>}
// CHECK-SAME:    %[[B0:[^:]*]]: tensor<32xf32> {piper.param = #piper.param<"layers.0.bias", zeros>}
// CHECK-SAME:    %[[W1:[^:]*]]: tensor<32x32xf32> {piper.param = #piper.param<"layers.1.weight", normal(0.02)>}
// CHECK-SAME:    %[[B1:[^:]*]]: tensor<32xf32> {piper.param = #piper.param<"layers.1.bias", zeros>}
// CHECK-SAME:    %[[WH:[^:]*]]: tensor<32x8xf32> {piper.param = #piper.param<"head.weight", normal(0.02)>}
// CHECK-SAME:    %[[BH:[^:]*]]: tensor<8xf32> {piper.param = #piper.param<"head.bias", zeros>}
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x16xf32>, %[[L:[^:]*]]: tensor<4xi64>) -> tensor<f32>
// One hidden layer per stage; the head and the loss in the last.
// CHECK:         %[[S0:.*]] = piper.annotate {PP = 0} -> tensor<4x32xf32> {
// CHECK-NEXT:      %[[A0:.*]] = piper.linear %[[X]], %[[W0]], %[[B0]] : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:      %[[R0:.*]] = piper.relu %[[A0]] : tensor<4x32xf32>
// CHECK-NEXT:      piper.yield %[[R0]] : tensor<4x32xf32>
// CHECK:         %[[S1:.*]] = piper.annotate {PP = 1} -> tensor<f32> {
// CHECK-NEXT:      %[[A1:.*]] = piper.linear %[[S0]], %[[W1]], %[[B1]]
// CHECK-NEXT:      %[[R1:.*]] = piper.relu %[[A1]]
// CHECK-NEXT:      %[[O:.*]] = piper.linear %[[R1]], %[[WH]], %[[BH]] : tensor<4x32xf32>, tensor<32x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %[[LOSS:.*]] = piper.cross_entropy %[[O]], %[[L]] : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
// CHECK-NEXT:      piper.yield %[[LOSS]] : tensor<f32>
// CHECK:         return %[[S1]] : tensor<f32>

// Autodiff: each stage gets a BI and a BW chunk; gradients of every
// parameter come back, named.
// GRAD-LABEL: func.func @step(
// GRAD-SAME:    -> (tensor<f64>, tensor<16x32xf64> {piper.grad = "layers.0.weight"}, tensor<32xf64> {piper.grad = "layers.0.bias"}
// GRAD-SAME:        tensor<8xf64> {piper.grad = "head.bias"})
// GRAD:         piper.annotate {PP = 1} pass = BI
// GRAD:           piper.vjp "piper.cross_entropy" wrt [0]
// GRAD:         piper.annotate {PP = 1} pass = BW
// GRAD:           piper.vjp "piper.linear" wrt [1]
// GRAD:           piper.vjp "piper.linear" wrt [2]
// GRAD:         piper.annotate {PP = 0} pass = BI
// GRAD:           piper.vjp "piper.relu" wrt [0]
// GRAD:         piper.annotate {PP = 0} pass = BW
// GRAD:           piper.vjp "piper.linear" wrt [1]

// Without --pp the model is one {PP = 0} chunk; with a mesh every parameter
// is replicated over dp with the requested ZeRO stage.
// SUMMARY-LABEL: mesh @mesh: 4 devices
// SUMMARY-NEXT:    axis dp: size 4
// SUMMARY-LABEL: function @step
// SUMMARY-NEXT:    param "layers.0.weight" normal(0.02) (arg 0) tensor<16x32xf32> #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 2>
// SUMMARY-NEXT:      per device: tensor<16x32xf32>, 2048 bytes; ZeRO-2 shards gradients and optimizer state 1/4
// SUMMARY-NEXT:    param "layers.0.bias" zeros (arg 1) tensor<32xf32> #piper.placement<@mesh, [{}], replicated = {dp}, zero = 2>
// SUMMARY:         param "head.bias" zeros (arg 5) tensor<8xf32> #piper.placement<@mesh, [{}], replicated = {dp}, zero = 2>
// SUMMARY-NEXT:      per device: tensor<8xf32>, 32 bytes; ZeRO-2 shards gradients and optimizer state 1/4
// SUMMARY-NEXT:    chunk {PP = 0}: 6 ops
// SUMMARY-NOT:     chunk
