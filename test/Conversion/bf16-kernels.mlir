// The kernels --piper-convert-to-kernels builds for bf16 tensors (the
// compute type of bf16-mixed plans) load and store bf16 and compute in f32:
// elementwise bodies widen their operands and round the result once, GEMMs
// accumulate (and add their bias) in an f32 tensor rounded once afterwards,
// row reductions sum in f32, and the 2-D linear/matmul VJPs call the
// library's _bf16 kernels (lib/Kernels/BlasVjpBF16.cpp).
// RUN: piper-opt %s --piper-convert-to-kernels | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @gelu_computes_in_f32(
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:           math.tanh %{{.*}} : f32
// CHECK:           %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16
func.func @gelu_computes_in_f32(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %y = piper.gelu %x : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @add_computes_in_f32(
// CHECK:         arith.extf
// CHECK-NEXT:    arith.extf
// CHECK-NEXT:    arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.truncf %{{.*}} : f32 to bf16
func.func @add_computes_in_f32(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %y = piper.add %a, %b : tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// CHECK-LABEL: func.func @linear_accumulates_in_f32(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<8x3xbf16>, %[[B:.*]]: tensor<3xbf16>)
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%[[Z]] : tensor<4x3xf32>)
// CHECK:         %[[B32:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<3xbf16>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[B32]] : tensor<4x3xf32>, tensor<3xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<4x3xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         return %[[R]] : tensor<4x3xbf16>
func.func @linear_accumulates_in_f32(%x: tensor<4x8xbf16>, %w: tensor<8x3xbf16>, %b: tensor<3xbf16>) -> tensor<4x3xbf16> {
  %y = piper.linear %x, %w, %b : tensor<4x8xbf16>, tensor<8x3xbf16>, tensor<3xbf16> -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// A linear of a vector is a 1-row GEMM, the same way.
// CHECK-LABEL: func.func @vector_linear(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x5xbf16>, tensor<5x3xbf16>) outs(%{{.*}} : tensor<1x3xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @vector_linear(%x: tensor<5xbf16>, %w: tensor<5x3xbf16>) -> tensor<3xbf16> {
  %y = piper.linear %x, %w : tensor<5xbf16>, tensor<5x3xbf16> -> tensor<3xbf16>
  return %y : tensor<3xbf16>
}

// Softmax: the row max is exact in bf16; exponentials and their row sum are
// f32; one rounding at the end.
// CHECK-LABEL: func.func @softmax_sums_in_f32(
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : bf16
// CHECK:         math.exp %{{.*}} : f32
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.truncf %{{.*}} : f32 to bf16
func.func @softmax_sums_in_f32(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %y = piper.softmax %x : tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// CHECK-LABEL: func.func @linear_vjp_calls_the_bf16_kernel(
// CHECK:         call @piper_k_vjp_linear_1_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
func.func @linear_vjp_calls_the_bf16_kernel(%x: tensor<4x8xbf16>, %w: tensor<8x3xbf16>, %dy: tensor<4x3xbf16>) -> tensor<8x3xbf16> {
  %g = piper.vjp "piper.linear" wrt [1] (%x, %w) cotangents (%dy) : (tensor<4x8xbf16>, tensor<8x3xbf16>), (tensor<4x3xbf16>) -> tensor<8x3xbf16>
  return %g : tensor<8x3xbf16>
}

// Attention: scores are bf16 x bf16 GEMMs into f32; the f32 probabilities
// meet the bf16 values after the values are widened (one GEMM input type).
// The attention is outlined (AttentionToLinalg.cpp), after the functions.
// CHECK-LABEL: func.func private @piper_attention_1x2x6_h2_bf16(
// CHECK:         linalg.batch_matmul {{.*}}ins(%{{.*}}, %{{.*}} : tensor<2x2x3xbf16>, tensor<2x2x3xbf16>) outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK:         arith.extf %{{.*}} : bf16 to f32
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%{{.*}} : tensor<2x2x3xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @attention(%q: tensor<1x2x6xbf16>) -> tensor<1x2x6xbf16> {
  %o = piper.attention %q, %q, %q {num_heads = 2 : i64} : tensor<1x2x6xbf16>, tensor<1x2x6xbf16>, tensor<1x2x6xbf16> -> tensor<1x2x6xbf16>
  return %o : tensor<1x2x6xbf16>
}
