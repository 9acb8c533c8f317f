// --piper-trace-kernels brackets every op of a private function (a launched
// body) whose kind the module's piper_plan.trace_kernels lists with
// piper_trace_kernel_begin/end(index of the kind); public functions
// (program entries, the model) and unlisted kinds are left alone, and
// without the attribute nothing changes.
// RUN: piper-opt %s -split-input-file --piper-trace-kernels -verify-diagnostics | FileCheck %s --enable-var-scope

// CHECK-LABEL: module attributes
// CHECK-LABEL: func.func private @body(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[DY:.*]]: tensor<4x8xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    call @piper_trace_kernel_begin(%[[C0]]) : (i64) -> ()
// CHECK-NEXT:    %[[Y:.*]] = piper.matmul %[[X]], %[[W]]
// CHECK-NEXT:    call @piper_trace_kernel_end(%[[C0]]) : (i64) -> ()
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    call @piper_trace_kernel_begin(%[[C2]]) : (i64) -> ()
// CHECK-NEXT:    %[[S:.*]] = piper.softmax %[[Y]]
// CHECK-NEXT:    call @piper_trace_kernel_end(%[[C2]]) : (i64) -> ()
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    call @piper_trace_kernel_begin(%[[C1]]) : (i64) -> ()
// CHECK-NEXT:    %[[D:.*]] = piper.vjp "piper.softmax"
// CHECK-NEXT:    call @piper_trace_kernel_end(%[[C1]]) : (i64) -> ()
// The unlisted relu is not traced.
// CHECK-NEXT:    %[[R:.*]] = piper.relu %[[D]]
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @entry(
// CHECK-NOT:     call @piper_trace_kernel
// CHECK:         return
// CHECK:       func.func private @piper_trace_kernel_begin(i64)
// CHECK:       func.func private @piper_trace_kernel_end(i64)
module attributes {piper_plan.trace_kernels = ["matmul", "softmax_vjp", "softmax"]} {
  func.func private @body(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %y = piper.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %s = piper.softmax %y : tensor<4x8xf32>
    %d = piper.vjp "piper.softmax" wrt [0] (%s) cotangents (%dy) : (tensor<4x8xf32>), (tensor<4x8xf32>) -> tensor<4x8xf32>
    %r = piper.relu %d : tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
  func.func @entry(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %y = piper.softmax %x : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// Without the attribute (a plan compiled without --trace-kernels) the pass
// changes nothing.
// CHECK-LABEL: func.func private @untraced_body(
// CHECK-NOT:     piper_trace_kernel
// CHECK:         piper.softmax
// CHECK-NOT:     piper_trace_kernel
func.func private @untraced_body(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = piper.softmax %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A malformed list is rejected at the module.
// expected-error@+1 {{'piper_plan.trace_kernels' must be an array of strings; entry #1 is 3 : i64}}
module attributes {piper_plan.trace_kernels = ["matmul", 3]} {
  func.func private @bad(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %y = piper.softmax %x : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
