// --piper-program-to-func on its own: the program becomes a public function
// of the step arguments it reads (a microbatch input is a slice of the whole
// argument), launches are calls bracketed by the trace hooks, the sum one
// elementwise linalg.generic adding in order then scaling by a scalar,
// events and the all-reduce calls of the
// runtime (collectives make events matter), and the results are returned
// after piper_comm_sync_all. The step function and the mesh are erased.
// RUN: piper-opt %s --piper-program-to-func | FileCheck %s --enable-var-scope

piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<4xf64>, %x: tensor<4x2xf64>) -> tensor<4xf64> {
  return %w : tensor<4xf64>
}
func.func private @body(%w: tensor<4xf64>, %x: tensor<2x2xf64>) -> tensor<4xf64> {
  return %w : tensor<4xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp"] {
  %x0 = piper.input 1 microbatch 0 of 2 along 0 : tensor<2x2xf64>
  %w = piper.input 0 : tensor<4xf64>
  %g0 = piper.launch "F" @body(%w, %x0) on "compute" : (tensor<4xf64>, tensor<2x2xf64>) -> tensor<4xf64>
  %g1 = piper.launch "F" @body(%w, %x0) on "compute" : (tensor<4xf64>, tensor<2x2xf64>) -> tensor<4xf64>
  %g = piper.sum "acc" %g0, %g1, %g0 scale 5.000000e-01 on "compute" : (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  piper.record 0 on "compute"
  piper.wait 0 on "dp"
  %r = piper.comm "ar"all_reduce %g over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<4xf64>
  piper.output 0 %r : tensor<4xf64>
}

// CHECK-NOT:  piper.mesh
// CHECK-NOT:  func.func @step(
// CHECK-LABEL: func.func @step.all(
// CHECK-SAME:   %[[W:.*]]: tensor<4xf64>, %[[X:.*]]: tensor<4x2xf64>) -> tensor<4xf64>
// CHECK-SAME:   attributes {llvm.emit_c_interface, piper_plan.inputs = array<i64: 0, 1>, piper_plan.outputs = array<i64: 0>, piper_plan.role = {}}
// CHECK-NEXT:   %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 2] [1, 1] : tensor<4x2xf64> to tensor<2x2xf64>
// CHECK-NEXT:   %[[L0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   call @piper_trace_begin(%[[L0]]) : (i64) -> ()
// CHECK-NEXT:   %[[G0:.*]] = call @body(%[[W]], %[[X0]])
// CHECK-NEXT:   call @piper_trace_end(%[[L0]]) : (i64) -> ()
// CHECK-NEXT:   %[[L1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:   call @piper_trace_begin(%[[L1]]) : (i64) -> ()
// CHECK-NEXT:   %[[G1:.*]] = call @body(%[[W]], %[[X0]])
// CHECK-NEXT:   call @piper_trace_end(%[[L1]]) : (i64) -> ()
// CHECK-NEXT:   %[[ACC:.*]] = tensor.empty() : tensor<4xf64>
// CHECK-NEXT:   %[[G:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel"]} ins(%[[G0]], %[[G1]], %[[G0]] : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) outs(%[[ACC]] : tensor<4xf64>) {
// CHECK-NEXT:   ^bb0(%[[A0:.*]]: f64, %[[A1:.*]]: f64, %[[A2:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:     %[[S1:.*]] = arith.addf %[[A0]], %[[A1]] : f64
// CHECK-NEXT:     %[[S2:.*]] = arith.addf %[[S1]], %[[A2]] : f64
// CHECK-NEXT:     %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT:     %[[M:.*]] = arith.mulf %[[S2]], %[[HALF]] : f64
// CHECK-NEXT:     linalg.yield %[[M]] : f64
// CHECK-NEXT:   } -> tensor<4xf64>
// CHECK-NEXT:   %[[E0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[S0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   call @piper_comm_record(%[[E0]], %[[S0]]) : (i64, i64) -> ()
// CHECK-NEXT:   %[[E1:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:   call @piper_comm_wait(%[[E1]], %[[S1]]) : (i64, i64) -> ()
// CHECK-NEXT:   %[[COMM:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[SCALE:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT:   %[[B:.*]] = bufferization.to_buffer %[[G]] read_only
// CHECK-NEXT:   %[[IN:.*]] = memref.cast %[[B]]
// CHECK-NEXT:   %[[OUT:.*]] = memref.alloc() : memref<4xf64>
// CHECK-NEXT:   %[[OUTU:.*]] = memref.cast %[[OUT]]
// CHECK-NEXT:   call @piper_comm_iall_reduce_f64(%[[IN]], %[[OUTU]], %[[COMM]], %[[SCALE]]) : (memref<*xf64>, memref<*xf64>, i64, f64) -> ()
// CHECK-NEXT:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NEXT:   call @piper_comm_sync_all() : () -> ()
// CHECK-NEXT:   return %[[R]] : tensor<4xf64>
// CHECK-DAG:  func.func private @piper_comm_sync_all()
// CHECK-DAG:  func.func private @piper_trace_begin(i64)
// CHECK-DAG:  func.func private @piper_trace_end(i64)
// CHECK-DAG:  func.func private @piper_comm_record(i64, i64)
// CHECK-DAG:  func.func private @piper_comm_wait(i64, i64)
// CHECK-DAG:  func.func private @piper_comm_iall_reduce_f64(memref<*xf64>, memref<*xf64>, i64, f64)
