// --piper-elide-result-copies: a buffer allocated in the entry block and
// copied into an out-parameter after its last use becomes that
// out-parameter; anything else keeps its copy.
// RUN: piper-opt %s --pass-pipeline='builtin.module(func.func(piper-elide-result-copies))' -split-input-file | FileCheck %s --enable-var-scope

func.func private @produce(memref<4xf32>, memref<4xf32>)

// The call writes straight into the out-parameter.
// CHECK-LABEL: func.func @copy_into_out_param_is_elided(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-NEXT:    call @produce(%[[X]], %[[OUT]])
// CHECK-NEXT:    return
func.func @copy_into_out_param_is_elided(%x: memref<4xf32>, %out: memref<4xf32>) {
  %b = memref.alloc() : memref<4xf32>
  call @produce(%x, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

func.func private @produce(memref<4xf32>, memref<4xf32>)

// The buffer is read after the copy, the out-parameter is read before it,
// and an input is not an allocation: all three copies stay.
// CHECK-LABEL: func.func @copies_that_must_stay(
// CHECK-COUNT-3: memref.copy
// CHECK-NOT:     memref.copy
func.func @copies_that_must_stay(%x: memref<4xf32>, %out: memref<4xf32>, %out2: memref<4xf32>, %out3: memref<4xf32>) {
  %b = memref.alloc() : memref<4xf32>
  call @produce(%x, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  call @produce(%b, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %c = memref.alloc() : memref<4xf32>
  call @produce(%out2, %c) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.copy %c, %out2 : memref<4xf32> to memref<4xf32>
  memref.copy %x, %out3 : memref<4xf32> to memref<4xf32>
  return
}
