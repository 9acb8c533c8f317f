// When the host issues a program's transfers (IssueOrder.h): the host runs
// compute in program order and only enqueues communication, so the lowering
// moves each send (with the waits on its stream right before it) up to just
// after what it depends on, and makes a receive nonblocking
// (piper_comm_irecv_*, with its program stream's index) when every reader
// of its value runs after a wait for an event recorded after it; that wait
// then completes it. 1F1B's two stages, microbatch 0: the last stage sends
// the input gradient before the weight-gradient launch placed ahead of it;
// the first stage receives that gradient without blocking and runs the next
// forward before it waits for it.
// RUN: piper-opt %s --split-input-file --piper-program-to-func | FileCheck %s --enable-var-scope

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<2xf64>, %w: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  return %x, %w : tensor<2xf64>, tensor<2xf64>
}
func.func private @f(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["compute", "pp"] {
  %x = piper.input 0 : tensor<2xf64>
  %y0 = piper.launch "F0" @f(%x) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.record 0 on "compute"
  piper.wait 0 on "pp"
  piper.send "y0" %y0 to @step.pp1 tag 0 on "pp" : tensor<2xf64>
  %g0 = piper.recv "g0" from @step.pp1 tag 0 on "pp" : tensor<2xf64>
  piper.record 1 on "pp"
  %y1 = piper.launch "F1" @f(%x) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.wait 1 on "compute"
  %b0 = piper.launch "B0" @f(%g0) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.output 0 %b0 : tensor<2xf64>
  piper.output 1 %y1 : tensor<2xf64>
}
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["compute", "pp"] {
  %y0 = piper.recv "y0" from @step.pp0 tag 0 on "pp" : tensor<2xf64>
  piper.record 0 on "pp"
  piper.wait 0 on "compute"
  %g0 = piper.launch "BI0" @f(%y0) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.record 1 on "compute"
  %w0 = piper.launch "BW0" @f(%y0) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.wait 1 on "pp"
  piper.send "g0" %g0 to @step.pp0 tag 0 on "pp" : tensor<2xf64>
  piper.output 1 %w0 : tensor<2xf64>
}

// CHECK-LABEL: func.func @step.pp0(
// CHECK:         call @f(
// CHECK:         call @piper_comm_send_f64(
// CHECK:         call @piper_comm_irecv_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[PP:.*]]) : (memref<*xf64>, i64, i64, i64) -> ()
// CHECK:         call @piper_comm_record(
// CHECK:         call @f(
// CHECK:         call @piper_comm_wait(
// CHECK:         call @f(
// CHECK:         call @piper_comm_sync_all()
// CHECK-LABEL: func.func @step.pp1(
// CHECK:         call @piper_comm_irecv_f64(
// CHECK:         call @piper_comm_wait(
// CHECK:         %[[G0:.*]] = call @f(
// CHECK:         call @piper_comm_wait(
// CHECK:         bufferization.to_buffer %[[G0]]
// CHECK:         call @piper_comm_send_f64(
// CHECK:         call @f(
// CHECK:         call @piper_comm_sync_all()

// -----

// A receive whose reader runs without waiting for it stays blocking (the
// program does not order the read after the arrival, so the host must); so
// does a bf16 receive, which travels as f32 and is narrowed at once. A send
// does not move above the previous instruction on its stream. A value only
// returned is received without blocking: piper_comm_sync_all completes it;
// with blocking receives only, nothing waits at the end.

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<2xf64>, %h: tensor<2xbf16>) -> (tensor<2xf64>, tensor<2xbf16>) {
  return %x, %h : tensor<2xf64>, tensor<2xbf16>
}
func.func private @f(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<2xf64>
  %h = piper.input 1 : tensor<2xbf16>
  piper.send "y" %x to @step.pp1 tag 0 on "pp" : tensor<2xf64>
  piper.send "h" %h to @step.pp1 tag 1 on "pp" : tensor<2xbf16>
  %r = piper.recv "x" from @step.pp1 tag 2 on "pp" : tensor<2xf64>
  piper.output 0 %r : tensor<2xf64>
}
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["compute", "pp"] {
  %x = piper.input 0 : tensor<2xf64>
  %y = piper.recv "y" from @step.pp0 tag 0 on "pp" : tensor<2xf64>
  %h = piper.recv "h" from @step.pp0 tag 1 on "pp" : tensor<2xbf16>
  %z = piper.launch "F" @f(%y) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.send "x" %x to @step.pp0 tag 2 on "pp" : tensor<2xf64>
  piper.output 0 %z : tensor<2xf64>
  piper.output 1 %h : tensor<2xbf16>
}

// CHECK-LABEL: func.func @step.pp0(
// CHECK:         call @piper_comm_irecv_f64(
// CHECK-LABEL: func.func @step.pp1(
// CHECK:         call @piper_comm_recv_f64(
// CHECK:         call @piper_comm_recv_f32(
// CHECK:         call @piper_comm_send_f64(
// CHECK:         call @f(
// CHECK-NOT:     call @piper_comm_sync_all()
// CHECK:         return
