// RUN: piper-opt %s | piper-opt | FileCheck %s
// RUN: piper-opt %s --mlir-print-op-generic | piper-opt | FileCheck %s
// Round trip of #piper.param on function arguments.

piper.mesh @m axes = [dp = 2, tp = 2]

// CHECK-LABEL: func.func @model(
// CHECK-SAME: tensor<8x8xf32> {piper.param = #piper.param<"layers.0.w", normal(0.02)>}
// CHECK-SAME: tensor<8xf64> {piper.param = #piper.param<"layers.0.norm", ones>}
// CHECK-SAME: tensor<8xbf16> {piper.param = #piper.param<"layers.0.bias", zeros>}
// CHECK-SAME: tensor<8x8xf32> {piper.param = #piper.param<"layers.1.w", normal(0.001), placement = #piper.placement<@m, [{}, {tp}], replicated = {dp}, zero = 3>>}
// CHECK-SAME: tensor<8x8xf32> {piper.param = #piper.param<"name with \22quotes\22", zeros>}
// CHECK-SAME: %{{.*}}: tensor<4x8xf32>)
func.func @model(
    %w: tensor<8x8xf32> {piper.param = #piper.param<"layers.0.w", normal(0.02)>},
    %n: tensor<8xf64> {piper.param = #piper.param<"layers.0.norm", ones>},
    %b: tensor<8xbf16> {piper.param = #piper.param<"layers.0.bias", zeros>},
    %v: tensor<8x8xf32> {piper.param = #piper.param<"layers.1.w", normal(0.001),
          placement = #piper.placement<@m, [{}, {tp}], replicated = {dp}, zero = 3>>},
    %q: tensor<8x8xf32> {piper.param = #piper.param<"name with \"quotes\"", zeros>},
    %x: tensor<4x8xf32>) {
  return
}
