// RUN: piper-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(piper-early-dealloc))" | FileCheck %s
// A program function frees each buffer right after its last use (through
// views), not at the end of the step; a buffer handed to a nonblocking
// collective, and every buffer of a function that is not a program, keeps
// its dealloc where it is.

func.func private @f(memref<4xf64>, memref<4xf64>)
func.func private @piper_comm_iall_reduce_f64(memref<*xf64>)

// CHECK-LABEL: func.func @program
// CHECK:       %[[A:.*]] = memref.alloc() : memref<4xf64>
// CHECK:       %[[B:.*]] = memref.alloc() : memref<4xf64>
// CHECK-NEXT:  call @f(%arg0, %[[A]])
// CHECK-NEXT:  %[[V:.*]] = memref.cast %[[A]]
// CHECK-NEXT:  call @f(%[[V]], %[[B]])
// CHECK-NEXT:  memref.dealloc %[[A]]
// CHECK-NEXT:  %[[C:.*]] = memref.alloc() : memref<4xf64>
// CHECK-NEXT:  call @f(%[[B]], %[[C]])
// CHECK-NEXT:  memref.dealloc %[[B]]
// CHECK-NEXT:  %[[U:.*]] = memref.cast %[[C]] : memref<4xf64> to memref<*xf64>
// CHECK-NEXT:  call @piper_comm_iall_reduce_f64(%[[U]])
// CHECK-NEXT:  call @f(%arg0, %arg1)
// CHECK-NEXT:  memref.dealloc %[[C]]
// CHECK-NEXT:  return
func.func @program(%x: memref<4xf64>, %out: memref<4xf64>) attributes {piper_plan.role = {pp = 0 : i64}} {
  %a = memref.alloc() : memref<4xf64>
  %b = memref.alloc() : memref<4xf64>
  call @f(%x, %a) : (memref<4xf64>, memref<4xf64>) -> ()
  %v = memref.cast %a : memref<4xf64> to memref<4xf64>
  call @f(%v, %b) : (memref<4xf64>, memref<4xf64>) -> ()
  %c = memref.alloc() : memref<4xf64>
  call @f(%b, %c) : (memref<4xf64>, memref<4xf64>) -> ()
  %u = memref.cast %c : memref<4xf64> to memref<*xf64>
  call @piper_comm_iall_reduce_f64(%u) : (memref<*xf64>) -> ()
  call @f(%x, %out) : (memref<4xf64>, memref<4xf64>) -> ()
  memref.dealloc %a : memref<4xf64>
  memref.dealloc %b : memref<4xf64>
  memref.dealloc %c : memref<4xf64>
  return
}

// -----

func.func private @f(memref<4xf64>, memref<4xf64>)

// CHECK-LABEL: func.func @body
// CHECK:       call @f
// CHECK-NEXT:  call @f
// CHECK-NEXT:  memref.dealloc
func.func @body(%x: memref<4xf64>, %out: memref<4xf64>) {
  %a = memref.alloc() : memref<4xf64>
  call @f(%x, %a) : (memref<4xf64>, memref<4xf64>) -> ()
  call @f(%x, %out) : (memref<4xf64>, memref<4xf64>) -> ()
  memref.dealloc %a : memref<4xf64>
  return
}
