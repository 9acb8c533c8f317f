// --piper-convert-to-kernels lowers piper.rope to linalg on tensors
// (lib/Conversion/RopeToLinalg.cpp): the cos/sin tables [S, Dh/2] from
// linalg.index as PyTorch computes them (1 / theta^(2c / Dh), times the
// position), x viewed as pairs [B, S, N, 2, Dh/2] whose halves are slices,
// and one generic that writes each half's rotation by the pair index.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope

// CHECK-DAG: #[[$TAB:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$HALF:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$POS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// Two heads of 4 channels at 3 positions, theta = 100.
// CHECK-LABEL: func.func @rope(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x8xf64>)
// CHECK:         %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[$TAB]], #[[$TAB]]], iterator_types = ["parallel", "parallel"]} outs(%{{.*}}, %{{.*}} : tensor<3x2xf64>, tensor<3x2xf64>)
// CHECK:           %[[S:.*]] = arith.sitofp
// CHECK:           %[[C:.*]] = arith.sitofp
// CHECK:           %[[TWOC:.*]] = arith.mulf %{{.*}}, %[[C]]
// CHECK:           %[[E:.*]] = arith.divf %[[TWOC]], %{{.*}}
// CHECK:           %[[P:.*]] = math.powf %{{.*}}, %[[E]] : f64
// CHECK:           %[[INV:.*]] = arith.divf %{{.*}}, %[[P]]
// CHECK:           %[[A:.*]] = arith.mulf %[[S]], %[[INV]]
// CHECK:           %[[SIN:.*]] = math.sin %[[A]]
// CHECK:           %[[COS:.*]] = math.cos %[[A]]
// CHECK:           linalg.yield %[[COS]], %[[SIN]]
// CHECK:         %[[PAIRS:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3, 4]] output_shape [2, 3, 2, 2, 2]
// CHECK:         %[[LO:.*]] = tensor.extract_slice %[[PAIRS]][0, 0, 0, 0, 0] [2, 3, 2, 1, 2] [1, 1, 1, 1, 1]
// CHECK:         %[[HI:.*]] = tensor.extract_slice %[[PAIRS]][0, 0, 0, 1, 0] [2, 3, 2, 1, 2] [1, 1, 1, 1, 1]
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$HALF]], #[[$HALF]], #[[$POS]], #[[$POS]], #[[$ID]]]
// CHECK-SAME:        ins(%[[LO]], %[[HI]], %[[T]]#0, %[[T]]#1 :
// CHECK:           %[[LC:.*]] = arith.mulf %[[L:.*]], %[[CS:.*]] : f64
// CHECK:           %[[NH:.*]] = arith.negf %[[H:.*]] : f64
// CHECK:           %[[HS:.*]] = arith.mulf %[[NH]], %[[SN:.*]] : f64
// CHECK:           %[[NEWLO:.*]] = arith.addf %[[LC]], %[[HS]]
// CHECK:           %[[HC:.*]] = arith.mulf %[[H]], %[[CS]]
// CHECK:           %[[LS:.*]] = arith.mulf %[[L]], %[[SN]]
// CHECK:           %[[NEWHI:.*]] = arith.addf %[[HC]], %[[LS]]
// CHECK:           %[[WHICH:.*]] = linalg.index 3
// CHECK:           %[[ISLO:.*]] = arith.cmpi eq, %[[WHICH]]
// CHECK:           arith.select %[[ISLO]], %[[NEWLO]], %[[NEWHI]]
// CHECK:         tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2, 3, 4]] : tensor<2x3x2x2x2xf64> into tensor<2x3x8xf64>
func.func @rope(%x: tensor<2x3x8xf64>) -> tensor<2x3x8xf64> {
  %r = piper.rope %x {head_dim = 4 : i64, theta = 100.0 : f64} : tensor<2x3x8xf64>
  return %r : tensor<2x3x8xf64>
}

// -----

// The inverse rotation (the VJP) negates the sine table.
// CHECK-LABEL: func.func @rope_inverse(
// CHECK:         linalg.generic
// CHECK:           %[[SIN:.*]] = math.sin
// CHECK:           %[[NEG:.*]] = arith.negf %[[SIN]]
// CHECK:           %[[COS:.*]] = math.cos
// CHECK:           linalg.yield %[[COS]], %[[NEG]]
func.func @rope_inverse(%x: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %r = piper.rope %x {head_dim = 4 : i64, inverse} : tensor<1x4x4xf32>
  return %r : tensor<1x4x4xf32>
}

// -----

// bf16 computes in f32 and rounds once.
// CHECK-LABEL: func.func @rope_bf16(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK:         linalg.generic
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
func.func @rope_bf16(%x: tensor<1x2x4xbf16>) -> tensor<1x2x4xbf16> {
  %r = piper.rope %x {head_dim = 4 : i64} : tensor<1x2x4xbf16>
  return %r : tensor<1x2x4xbf16>
}

// -----

// Positions from the offset: index 0 of the tables plus 5.
// CHECK-LABEL: func.func @rope_offset(
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[P:.*]] = arith.addi %[[I]], %c5{{.*}} : index
// CHECK:           %[[PI:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK:           arith.sitofp %[[PI]] : i64 to f32
func.func @rope_offset(%x: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %r = piper.rope %x {head_dim = 4 : i64, offset = 5 : i64} : tensor<1x4x4xf32>
  return %r : tensor<1x4x4xf32>
}

// -----

// Partial rotary: the first 4 of each head's 8 channels rotate (tables
// [S, 2], exponent 2c / 4) in one generic over the heads [B, S, N, Dh] that
// reads each channel's partner and table entries with tensor.extract;
// channels 4..7 pass through. No slice is inserted back (a strided copy).
// CHECK-LABEL: func.func @rope_partial(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x16xf64>)
// CHECK:         %[[T:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<3x2xf64>, tensor<3x2xf64>)
// CHECK:           arith.constant 4.000000e+00 : f64
// CHECK:         %[[H:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 2, 8] : tensor<2x3x16xf64> into tensor<2x3x2x8xf64>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x3x2x8xf64>) outs(%{{.*}} : tensor<2x3x2x8xf64>)
// CHECK:           tensor.extract %[[H]][
// CHECK:           tensor.extract %[[T]]#0[
// CHECK:           tensor.extract %[[T]]#1[
// CHECK:         tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2, 3]] : tensor<2x3x2x8xf64> into tensor<2x3x16xf64>
// CHECK-NOT:     tensor.insert_slice
func.func @rope_partial(%x: tensor<2x3x16xf64>) -> tensor<2x3x16xf64> {
  %r = piper.rope %x {head_dim = 8 : i64, rotary_dim = 4 : i64} : tensor<2x3x16xf64>
  return %r : tensor<2x3x16xf64>
}
