// Replicas share their role's program (docs/Lowering.md, "Replicas").
// RUN: split-file %s %t
//
// Sends: with dp = 2 before pp in the mesh, world ranks are dp * 2 + pp, and
// every replica's peer is one rank up (and back down), so one program with
// a peer offset serves both replicas.
// RUN: piper-compile %t/send.mlir --emit=kernels | FileCheck %s --check-prefix=SEND
//
// ZeRO-1 over dp = 2 of a 3-element parameter (chunks of 2, zero-padded):
// the gradient is reduce-scattered (nonblocking: `i`) and scaled by 1/2 (two
// batch replicas),
// the whole parameter is cut to this member's chunk, the update body runs
// on chunks (a clone), and the updated chunk is all-gathered back; the
// momentum is held as a chunk; the step's results wait for every stream
// (piper_comm_sync_all). Communicators: 0 = (dp, dp_grad), 1 = (dp,
// dp_param).
// RUN: piper-compile %t/zero1.mlir --emit=kernels | FileCheck %s --check-prefix=ZERO1
//
// Plain data parallelism: all_reduce, then the update on whole tensors.
// Every launch is bracketed by piper-run's trace hooks (its index); events
// become piper_comm_record/wait(event, stream index): the nonblocking
// all-reduce on "dp_grad" (stream 1) is waited for before the update on
// "compute" (stream 0).
// RUN: piper-compile %t/dp.mlir --emit=kernels | FileCheck %s --check-prefix=DP
//
// A group of one device with one batch replica in all (a `replicate` over
// dp = 1): the all-reduce is its operand, with no call, buffer or copy.
// RUN: piper-compile %t/dp1.mlir --emit=kernels | FileCheck %s --check-prefix=DP1
//
// A group of one device (dp = 1) among two batch replicas (ep = 2): the
// call stays, to scale the gradient by 1/2.
// RUN: piper-compile %t/dp1ep2.mlir --emit=kernels | FileCheck %s --check-prefix=DP1EP2

// SEND-LABEL: func.func @step.pp0(
// SEND:         %[[ONE:.*]] = arith.constant 1 : i64
// SEND:         call @piper_comm_send_f64(%{{.*}}, %[[ONE]], %{{.*}})
// SEND-LABEL: func.func @step.pp1(
// SEND:         %[[MINUS:.*]] = arith.constant -1 : i64
// SEND:         call @piper_comm_irecv_f64(%{{.*}}, %[[MINUS]], %{{.*}}, %{{.*}})

// ZERO1:       func.func private @upd.zero(%{{.*}}: tensor<2xf64>, %{{.*}}: tensor<2xf64>, %{{.*}}: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
// ZERO1:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
// ZERO1-LABEL: func.func @step.all(
// ZERO1-SAME:    %[[W:.*]]: tensor<3xf64>, %[[X:.*]]: tensor<3xf64>, %[[M:.*]]: tensor<2xf64>) -> (tensor<3xf64>, tensor<2xf64>)
// ZERO1:         %[[G:.*]] = call @grad(%[[W]], %[[X]])
// ZERO1-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// ZERO1-DAG:     %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// ZERO1:         call @piper_comm_ireduce_scatter_f64(%{{.*}}, %{{.*}}, %[[C0]], %[[HALF]]) : (memref<*xf64>, memref<*xf64>, i64, f64) -> ()
// ZERO1:         %[[GS:.*]] = bufferization.to_tensor %{{.*}} : memref<2xf64> to tensor<2xf64>
// ZERO1:         call @piper_comm_shard_f64(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf64>, memref<*xf64>, i64) -> ()
// ZERO1:         %[[WS:.*]] = bufferization.to_tensor %{{.*}} : memref<2xf64> to tensor<2xf64>
// ZERO1:         %[[U:.*]]:2 = call @upd.zero(%[[WS]], %[[GS]], %[[M]]) : (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
// ZERO1:         %[[C1:.*]] = arith.constant 1 : i64
// ZERO1:         call @piper_comm_iall_gather_f64(%{{.*}}, %{{.*}}, %[[C1]]) : (memref<*xf64>, memref<*xf64>, i64) -> ()
// ZERO1:         %[[A:.*]] = bufferization.to_tensor %{{.*}} : memref<3xf64> to tensor<3xf64>
// ZERO1:         call @piper_comm_sync_all() : () -> ()
// ZERO1:         return %[[A]], %[[U]]#1 : tensor<3xf64>, tensor<2xf64>

// DP-LABEL: func.func @step.all(
// DP-SAME:    tensor<3xf64>, %{{.*}}: tensor<3xf64>, %{{.*}}: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
// DP:         %[[L0:.*]] = arith.constant 0 : i64
// DP:         call @piper_trace_begin(%[[L0]]) : (i64) -> ()
// DP:         call @grad(
// DP:         call @piper_trace_end(%[[L0]]) : (i64) -> ()
// DP:         call @piper_comm_record(%{{.*}}, %{{.*}}) : (i64, i64) -> ()
// DP:         call @piper_comm_wait(%{{.*}}, %{{.*}}) : (i64, i64) -> ()
// DP:         call @piper_comm_iall_reduce_f64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf64>, memref<*xf64>, i64, f64) -> ()
// DP:         %[[E1:.*]] = arith.constant 1 : i64
// DP:         %[[S1:.*]] = arith.constant 1 : i64
// DP:         call @piper_comm_record(%[[E1]], %[[S1]]) : (i64, i64) -> ()
// DP:         %[[E1W:.*]] = arith.constant 1 : i64
// DP:         %[[S0:.*]] = arith.constant 0 : i64
// DP:         call @piper_comm_wait(%[[E1W]], %[[S0]]) : (i64, i64) -> ()
// DP:         call @upd(

// DP1-LABEL: func.func @step.all(
// DP1:         %[[G:.*]] = call @grad(%arg0, %arg1)
// DP1-NOT:     piper_comm_iall_reduce
// DP1:         call @upd(%arg0, %[[G]], %arg2)

// DP1EP2-LABEL: func.func @step.all(
// DP1EP2:         %[[G:.*]] = call @grad(%arg0, %arg2)
// DP1EP2:         %[[H:.*]] = call @grad(%arg1, %arg2)
// DP1EP2:         %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// DP1EP2:         call @piper_comm_iall_reduce_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[HALF]])
// DP1EP2:         %[[HALF2:.*]] = arith.constant 5.000000e-01 : f64
// DP1EP2:         call @piper_comm_iall_reduce_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[HALF2]])

//--- send.mlir
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<2xf64>
  piper.send "x" %x to @step.pp1 tag 0 on "pp" : tensor<2xf64>
}
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["pp"] {
  %x = piper.recv "x" from @step.pp0 tag 0 on "pp" : tensor<2xf64>
  piper.output 0 %x : tensor<2xf64>
}

//--- zero1.mlir
piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}, zero = 1>>},
                %x: tensor<3xf64>,
                %m: tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">})
    -> (tensor<3xf64> {piper.updated = "w"}, tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">}) {
  return %w, %m : tensor<3xf64>, tensor<3xf64>
}
func.func private @grad(%w: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %g = piper.mul %w, %x : tensor<3xf64>
  return %g : tensor<3xf64>
}
func.func private @upd(%w: tensor<3xf64>, %g: tensor<3xf64>, %m: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<3xf64>
  return %p, %b : tensor<3xf64>, tensor<3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp_grad", "dp_param"] {
  %w = piper.input 0 : tensor<3xf64>
  %x = piper.input 1 : tensor<3xf64>
  %m = piper.input 2 : tensor<3xf64>
  %g = piper.launch "BW" @grad(%w, %x) on "compute" : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %r = piper.comm "rs" reduce_scatter %g over ["dp"] on "dp_grad" : tensor<3xf64>
  %u:2 = piper.launch "UPD" @upd(%w, %r, %m) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  %a = piper.comm "ag" all_gather %u#0 over ["dp"] on "dp_param" : tensor<3xf64>
  piper.output 0 %a : tensor<3xf64>
  piper.output 1 %u#1 : tensor<3xf64>
}

//--- dp.mlir
piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}>>},
                %x: tensor<3xf64>,
                %m: tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">})
    -> (tensor<3xf64> {piper.updated = "w"}, tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">}) {
  return %w, %m : tensor<3xf64>, tensor<3xf64>
}
func.func private @grad(%w: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %g = piper.mul %w, %x : tensor<3xf64>
  return %g : tensor<3xf64>
}
func.func private @upd(%w: tensor<3xf64>, %g: tensor<3xf64>, %m: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<3xf64>
  return %p, %b : tensor<3xf64>, tensor<3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp_grad"] {
  %w = piper.input 0 : tensor<3xf64>
  %x = piper.input 1 : tensor<3xf64>
  %m = piper.input 2 : tensor<3xf64>
  %g = piper.launch "BW" @grad(%w, %x) on "compute" : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  piper.record 0 on "compute"
  piper.wait 0 on "dp_grad"
  %r = piper.comm "ar" all_reduce %g over ["dp"] on "dp_grad" : tensor<3xf64>
  piper.record 1 on "dp_grad"
  piper.wait 1 on "compute"
  %u:2 = piper.launch "UPD" @upd(%w, %r, %m) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  piper.output 0 %u#0 : tensor<3xf64>
  piper.output 1 %u#1 : tensor<3xf64>
}

//--- dp1.mlir
piper.mesh @mesh axes = [dp = 1]
func.func @step(%w: tensor<3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}>>},
                %x: tensor<3xf64>,
                %m: tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">})
    -> (tensor<3xf64> {piper.updated = "w"}, tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">}) {
  return %w, %m : tensor<3xf64>, tensor<3xf64>
}
func.func private @grad(%w: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %g = piper.mul %w, %x : tensor<3xf64>
  return %g : tensor<3xf64>
}
func.func private @upd(%w: tensor<3xf64>, %g: tensor<3xf64>, %m: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<3xf64>
  return %p, %b : tensor<3xf64>, tensor<3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp_grad"] {
  %w = piper.input 0 : tensor<3xf64>
  %x = piper.input 1 : tensor<3xf64>
  %m = piper.input 2 : tensor<3xf64>
  %g = piper.launch "BW" @grad(%w, %x) on "compute" : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  piper.record 0 on "compute"
  piper.wait 0 on "dp_grad"
  %r = piper.comm "ar" all_reduce %g over ["dp"] on "dp_grad" : tensor<3xf64>
  piper.record 1 on "dp_grad"
  piper.wait 1 on "compute"
  %u:2 = piper.launch "UPD" @upd(%w, %r, %m) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  piper.output 0 %u#0 : tensor<3xf64>
  piper.output 1 %u#1 : tensor<3xf64>
}

//--- dp1ep2.mlir
piper.mesh @mesh axes = [dp = 1, ep = 2]
func.func @step(%w: tensor<3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp, ep}>>},
                %e: tensor<3xf64> {piper.param = #piper.param<"e", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}>>},
                %x: tensor<3xf64>,
                %m: tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">},
                %n: tensor<3xf64> {piper.state = #piper.state<"e", "momentum_buffer">})
    -> (tensor<3xf64> {piper.updated = "w"}, tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">},
        tensor<3xf64> {piper.updated = "e"}, tensor<3xf64> {piper.state = #piper.state<"e", "momentum_buffer">}) {
  return %w, %m, %e, %n : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>
}
func.func private @grad(%w: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %g = piper.mul %w, %x : tensor<3xf64>
  return %g : tensor<3xf64>
}
func.func private @upd(%w: tensor<3xf64>, %g: tensor<3xf64>, %m: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<3xf64>
  return %p, %b : tensor<3xf64>, tensor<3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp_grad"] {
  %w = piper.input 0 : tensor<3xf64>
  %e = piper.input 1 : tensor<3xf64>
  %x = piper.input 2 : tensor<3xf64>
  %m = piper.input 3 : tensor<3xf64>
  %n = piper.input 4 : tensor<3xf64>
  %g = piper.launch "BW" @grad(%w, %x) on "compute" : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %h = piper.launch "BWE" @grad(%e, %x) on "compute" : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  piper.record 0 on "compute"
  piper.wait 0 on "dp_grad"
  %r = piper.comm "ar" all_reduce %g over ["dp", "ep"] on "dp_grad" : tensor<3xf64>
  %s = piper.comm "ar_expert" all_reduce %h over ["dp"] on "dp_grad" : tensor<3xf64>
  piper.record 1 on "dp_grad"
  piper.wait 1 on "compute"
  %u:2 = piper.launch "UPD" @upd(%w, %r, %m) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  %v:2 = piper.launch "UPDE" @upd(%e, %s, %n) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  piper.output 0 %u#0 : tensor<3xf64>
  piper.output 1 %u#1 : tensor<3xf64>
  piper.output 2 %v#0 : tensor<3xf64>
  piper.output 3 %v#1 : tensor<3xf64>
}
