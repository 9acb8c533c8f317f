// --piper-gpu-map-linalg takes a warp-multiple block size and static
// iteration spaces.
// RUN: not piper-opt %s --pass-pipeline='builtin.module(func.func(piper-gpu-map-linalg{block-size=100}))' 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: piper-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(piper-gpu-map-linalg))'

// BLOCK: invalid-map-linalg.mlir:[[@LINE+2]]:1: error: block-size must be a multiple of 32 in [32, 1024], got 100
#id1 = affine_map<(d0) -> (d0)>
func.func @dynamic_extent_is_rejected(%a: memref<?xf32>, %b: memref<?xf32>) {
  // expected-error@+1 {{the GPU target maps static iteration spaces only}}
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
