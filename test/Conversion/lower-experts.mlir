// Expert parallelism's local view (docs/Lowering.md): expert weights split
// on dim 0 over ep = 2 are held as 2 of 4 experts; a body they reach runs
// as a re-typed clone (`.local`): the first all_to_all takes the token-side
// buffer [E=4, C=2, H=3] to the expert side [E/N=2, N C=4, 3] (direction
// 0), expert_ffn runs there (batched GEMMs), the second brings it back
// (direction 1); the saved expert-side buffer leaves the clone as such and the weight-gradient
// body that reads it is re-typed too. Uncalled bodies with collectives are
// dropped. The communicator of (ep, "ep") is #0.
// RUN: piper-compile %s --emit=kernels | FileCheck %s

// CHECK-LABEL: func.func private @ffn.local(
// CHECK-SAME:    %{{.*}}: tensor<4x2x3xf64>, %{{.*}}: tensor<2x3x3xf64>, %{{.*}}: tensor<2x3x3xf64>, %{{.*}}: tensor<2x3x3xf64>) -> (tensor<4x2x3xf64>, tensor<2x4x3xf64>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         %[[TO:.*]] = arith.constant 0 : i64
// CHECK:         call @piper_comm_all_to_all_f64(%{{.*}}, %{{.*}}, %[[C0]], %[[TO]]) : (memref<*xf64>, memref<*xf64>, i64, i64) -> ()
// CHECK:         %[[IN:.*]] = bufferization.to_tensor %{{.*}} : memref<2x4x3xf64> to tensor<2x4x3xf64>
// CHECK:         linalg.batch_matmul ins(%[[IN]], %{{.*}} : tensor<2x4x3xf64>, tensor<2x3x3xf64>)
// CHECK:         %[[BACK:.*]] = arith.constant 1 : i64
// CHECK:         call @piper_comm_all_to_all_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[BACK]])
// CHECK:         %[[OUT:.*]] = bufferization.to_tensor %{{.*}} : memref<4x2x3xf64> to tensor<4x2x3xf64>
// CHECK:         return %[[OUT]], %[[IN]] : tensor<4x2x3xf64>, tensor<2x4x3xf64>
// CHECK-NOT:   func.func private @ffn(
// CHECK-LABEL: func.func private @dw.local(
// CHECK-SAME:    %{{.*}}: tensor<2x4x3xf64>, %{{.*}}: tensor<2x3x3xf64>, %{{.*}}: tensor<2x3x3xf64>, %{{.*}}: tensor<2x3x3xf64>, %{{.*}}: tensor<2x4x3xf64>) -> tensor<2x3x3xf64>
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf64>, tensor<2x4x3xf64>) outs(%{{.*}} : tensor<2x3x3xf64>)
// CHECK-LABEL: func.func @step.all(
// CHECK-SAME:    %[[WG:.*]]: tensor<2x3x3xf64>, %[[WU:.*]]: tensor<2x3x3xf64>, %[[WD:.*]]: tensor<2x3x3xf64>, %[[BUF:.*]]: tensor<4x2x3xf64>) -> tensor<4x2x3xf64>
// CHECK:         %[[Y:.*]]:2 = call @ffn.local(%[[BUF]], %[[WG]], %[[WU]], %[[WD]])
// CHECK:         call @dw.local(%[[Y]]#1, %[[WG]], %[[WU]], %[[WD]], %[[Y]]#1)
// CHECK:         return %[[Y]]#0
// CHECK:       func.func private @piper_comm_all_to_all_f64(memref<*xf64>, memref<*xf64>, i64, i64)

piper.mesh @mesh axes = [ep = 2]
func.func @step(%wg: tensor<4x3x3xf64> {piper.param = #piper.param<"experts.w_gate", zeros, placement = #piper.placement<@mesh, [{ep}, {}, {}]>>},
                %wu: tensor<4x3x3xf64> {piper.param = #piper.param<"experts.w_up", zeros, placement = #piper.placement<@mesh, [{ep}, {}, {}]>>},
                %wd: tensor<4x3x3xf64> {piper.param = #piper.param<"experts.w_down", zeros, placement = #piper.placement<@mesh, [{ep}, {}, {}]>>},
                %buf: tensor<4x2x3xf64>) -> tensor<4x2x3xf64> {
  return %buf : tensor<4x2x3xf64>
}
func.func private @ffn(%buf: tensor<4x2x3xf64>, %wg: tensor<4x3x3xf64>, %wu: tensor<4x3x3xf64>, %wd: tensor<4x3x3xf64>) -> (tensor<4x2x3xf64>, tensor<4x2x3xf64>) {
  %r:2 = piper.annotate {EP = 0} -> tensor<4x2x3xf64>, tensor<4x2x3xf64> {
    %in = piper.collective "to_experts" all_to_all %buf over ["ep"] of @mesh stream "ep" : tensor<4x2x3xf64>
    %y = piper.expert_ffn %in, %wg, %wu, %wd : tensor<4x2x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64> -> tensor<4x2x3xf64>
    %out = piper.collective "from_experts" all_to_all %y over ["ep"] of @mesh stream "ep" : tensor<4x2x3xf64>
    piper.yield %out, %in : tensor<4x2x3xf64>, tensor<4x2x3xf64>
  }
  return %r#0, %r#1 : tensor<4x2x3xf64>, tensor<4x2x3xf64>
}
func.func private @dw(%in: tensor<4x2x3xf64>, %wg: tensor<4x3x3xf64>, %wu: tensor<4x3x3xf64>, %wd: tensor<4x3x3xf64>, %dy: tensor<4x2x3xf64>) -> tensor<4x3x3xf64> {
  %g = piper.vjp "piper.expert_ffn" wrt [1] (%in, %wg, %wu, %wd) cotangents (%dy) : (tensor<4x2x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>), (tensor<4x2x3xf64>) -> tensor<4x3x3xf64>
  return %g : tensor<4x3x3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "ep"] {
  %wg = piper.input 0 : tensor<4x3x3xf64>
  %wu = piper.input 1 : tensor<4x3x3xf64>
  %wd = piper.input 2 : tensor<4x3x3xf64>
  %buf = piper.input 3 : tensor<4x2x3xf64>
  %y:2 = piper.launch "F" @ffn(%buf, %wg, %wu, %wd) on "compute" : (tensor<4x2x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>) -> (tensor<4x2x3xf64>, tensor<4x2x3xf64>)
  %g = piper.launch "BW" @dw(%y#1, %wg, %wu, %wd, %y#1) on "compute" : (tensor<4x2x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>, tensor<4x3x3xf64>, tensor<4x2x3xf64>) -> tensor<4x3x3xf64>
  piper.output 0 %y#0 : tensor<4x2x3xf64>
}
