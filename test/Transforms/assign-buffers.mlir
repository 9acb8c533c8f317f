// RUN: split-file %s %t
// --piper-assign-buffers gives every value of the device programs a buffer
// and reuses buffers only when happens-before (program order on a stream,
// record/wait events across streams) says the old value is dead;
// --piper-verify-programs re-checks every assignment.
//
// Hand-written: reuse on one stream, none across streams without an event,
// reuse again once an event orders the streams.
// RUN: piper-opt %t/streams.mlir --piper-assign-buffers --piper-verify-programs | FileCheck %s --check-prefix=STREAMS --enable-var-scope
//
// 1F1B on a 2-stage MLP over dp = 2, 4 microbatches, AdamW; the memory
// plan of the same DAG is printed first, for comparison (docs/DevicePrograms.md
// explains the difference).
// RUN: piper-gen --config=tiny-mlp --layers=2 --pp=2 --mesh=dp=2,pp=2 -o %t/mlp.mlir
// RUN: piper-opt %t/mlp.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter --piper-memory-plan --piper-partition --piper-assign-buffers=report --piper-verify-programs -o %t/1f1b.out.mlir | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --input-file=%t/1f1b.out.mlir --enable-var-scope
//
// DualPipeV: 4 stages on 2 ranks, the second task of an overlapped pair on
// "compute_overlap".
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --mesh=pp=2 -o %t/mlp4v.mlir
// RUN: piper-opt %t/mlp4v.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/dualpipev.mlir" --transform-interpreter --piper-memory-plan --piper-partition --piper-assign-buffers=report --piper-verify-programs -o %t/dpv.out.mlir | FileCheck %s --check-prefix=DPVREPORT
// RUN: FileCheck %s --check-prefix=DPV --input-file=%t/dpv.out.mlir --enable-var-scope

// %x dies at F0, so F1 on the same stream takes its buffer. %y's last use
// is a send on "pp": F2 on "compute" may not take %y's buffer (nothing
// orders the send before it) nor %h's (F2 reads %h), so it gets a new one.
// Event 1 orders the send before F3, which takes %y's buffer back.
// STREAMS-LABEL: piper.program @a role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp"] buffers [128, 128, 128] persistent 0 {
// STREAMS-NEXT:    %[[X:.*]] = piper.input 0 buffers [0]
// STREAMS-NEXT:    %[[H:.*]] = piper.launch "F0" @f(%[[X]]) on "compute" buffers [1]
// STREAMS-NEXT:    %[[Y:.*]] = piper.launch "F1" @f(%[[H]]) on "compute" buffers [0]
// STREAMS:         piper.send "y" %[[Y]] to @b tag 0 on "pp"
// STREAMS-NEXT:    %[[Z:.*]] = piper.launch "F2" @f(%[[H]]) on "compute" buffers [2]
// STREAMS-NEXT:    piper.record 1 on "pp"
// STREAMS-NEXT:    piper.wait 1 on "compute"
// STREAMS-NEXT:    %[[V:.*]] = piper.launch "F3" @f(%[[Z]]) on "compute" buffers [0]
// STREAMS-LABEL: piper.program @b role {pp = 1 : i64} of @mesh step @step streams ["pp"] buffers [128] persistent 0 {
// STREAMS-NEXT:    piper.recv "y" from @a tag 0 on "pp" buffers [0]

// Persistent buffers (parameters and AdamW state) match the memory plan's
// params + optimizer bytes exactly (pp=0: 2176 + 4368 = 6544). Each
// microbatch's weight gradients are added into the running sum right after
// their backward, so the transient buffers stay below the plan's peak
// (pp=0: 7936 bytes in 13 buffers; the plan's non-persistent peak is 12432
// - 6544 = 5888, and all four microbatch inputs are there from the start).
// REPORT:      memory plan of @step (bytes per device)
// REPORT-NEXT: pp=0: peak 12432 at step 15 of 29 'BW{PP=0,MB=1}'
// REPORT:        reuse: 28 buffers in 10 allocations, 13456 bytes reserved
// REPORT-NEXT: pp=1: peak 28100
// REPORT:        reuse: 52 buffers in 16 allocations, 29128 bytes reserved
// REPORT-NEXT: buffers of @step.pp0 {pp=0}: 52 values in 21 buffers (8 persistent, 6544 bytes; 13 transient, 7936 bytes), 14480 bytes reserved
// REPORT-NEXT: buffers of @step.pp1 {pp=1}: 103 values in 34 buffers (16 persistent, 15872 bytes; 18 transient, 13320 bytes), 29192 bytes reserved

// Stage 0: parameters and state get the first buffers; the receive of a
// gradient takes the buffer of the activation just sent on the same
// stream; the next forward reuses the buffers the backward freed; the
// microbatch's running sum and the all-reduce work in place over the first
// contribution; the update writes parameters and state in place.
// CHECK-LABEL: piper.program @step.pp0 role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "dp_grad"] buffers [2048, 128, 8, 2048, 2048, 8, 128, 128, 256, 256, 256, 256, 512, 512, 512, 512, 512, 2048, 128, 2048, 128] persistent 8 {
// CHECK:         %[[W:.*]] = piper.input 0 buffers [0] : tensor<16x32xf32>
// CHECK:         %[[F0:.*]]:2 = piper.launch "F{PP=0,MB=0}" {{.*}} on "compute" buffers [[[ACT:[0-9]+]], [[SAVED:[0-9]+]]]
// CHECK:         piper.send "F{PP=0,MB=0}#0->{pp=1}" %[[F0]]#0 {{.*}} on "pp"
// CHECK-NEXT:    %[[G0:.*]] = piper.recv "BI{PP=1,MB=0}#2->{pp=0}" {{.*}} on "pp" buffers [[[ACT]]]
// CHECK:         piper.launch "BI{PP=0,MB=0}" @step.BI.PP0(%[[F0]]#1, %[[G0]])
// CHECK:         %[[BW0:.*]]:2 = piper.launch "BW{PP=0,MB=0}" {{.*}} buffers [[[GW:[0-9]+]], [[GB:[0-9]+]]]
// CHECK:         piper.launch "F{PP=0,MB=2}" {{.*}} on "compute" buffers [[[ACT]], [[SAVED]]]
// CHECK:         %[[S1:.*]] = piper.sum "accumulate(BW{PP=0}#0)" %[[BW0]]#0, {{.*}} on "compute" buffers [[[GW]]]
// CHECK:         %[[S2:.*]] = piper.sum "accumulate(BW{PP=0}#0)" %[[S1]], {{.*}} on "compute" buffers [[[GW]]]
// CHECK:         %[[S:.*]] = piper.sum "accumulate(BW{PP=0}#0)" %[[S2]], {{.*}} on "compute" buffers [[[GW]]]
// CHECK:         %[[R:.*]] = piper.comm "all_reduce(accumulate(BW{PP=0}#0)#0)" all_reduce %[[S]] over ["dp"] on "dp_grad" buffers [[[GW]]]
// CHECK:         piper.launch "UPD{PP=0}" @step.UPD.PP0({{.*}}) on "compute" buffers [2, 0, 3, 4, 5, 1, 6, 7]

// DualPipeV: gradients are step results here (no optimizer), so the sums
// live to the end; each microbatch's contribution only until it is added.
// DPVREPORT:      pp=0: peak 24164
// DPVREPORT:        reuse: 80 buffers in 26 allocations, 27496 bytes reserved
// DPVREPORT:      pp=1: peak 25728
// DPVREPORT:        reuse: 56 buffers in 20 allocations, 28288 bytes reserved
// DPVREPORT-NEXT: buffers of @step.pp0 {pp=0}: 107 values in 38 buffers (6 persistent, 7456 bytes; 32 transient, 22152 bytes), 29608 bytes reserved
// DPVREPORT-NEXT: buffers of @step.pp1 {pp=1}: 72 values in 25 buffers (4 persistent, 8448 bytes; 21 transient, 20352 bytes), 28800 bytes reserved

// BI{PP=0,MB=0} on "compute" and F{PP=3,MB=2} on "compute_overlap" are an
// overlapped pair. BI reads F{PP=0,MB=0}'s saved output (buffer 15): it is
// dead after BI in program order, but F{PP=3,MB=2} only waits for events
// recorded before BI, so it takes buffer 16 (freed by BW{PP=3,MB=1},
// before event 10) and a new one, not 15. BI{PP=3,MB=2}, on "compute"
// after BI{PP=0,MB=0}, reuses 15.
// DPV-LABEL: piper.program @step.pp0 role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "compute_overlap"]
// DPV:       %[[F00:.*]]:2 = piper.launch "F{PP=0,MB=0}" {{.*}} on "compute" buffers [14, 15]
// DPV:       %[[R1:.*]] = piper.recv "F{PP=2,MB=1}#0->{pp=0}" {{.*}} buffers [16]
// DPV:       piper.launch "BW{PP=3,MB=1}" @step.BW.PP3({{.*}}, %[[R1]], {{.*}}) on "compute"
// DPV-NEXT:  piper.record 10 on "compute"
// DPV:       piper.launch "BI{PP=0,MB=0}" @step.BI.PP0(%[[F00]]#1, {{.*}}) on "compute" buffers [14]
// DPV:       piper.wait 10 on "compute_overlap"
// DPV-NEXT:  piper.launch "F{PP=3,MB=2}" {{.*}} on "compute_overlap" buffers [29, 30, 16, 23]
// DPV:       piper.launch "BI{PP=3,MB=2}" {{.*}} on "compute" buffers [36, 14, 15]

//--- streams.mlir
piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

piper.program @a role {pp = 0} of @mesh step @step streams ["compute", "pp"] {
  %x = piper.input 0 : tensor<4x8xf32>
  %h = piper.launch "F0" @f(%x) on "compute" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = piper.launch "F1" @f(%h) on "compute" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.record 0 on "compute"
  piper.wait 0 on "pp"
  piper.send "y" %y to @b tag 0 on "pp" : tensor<4x8xf32>
  %z = piper.launch "F2" @f(%h) on "compute" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.record 1 on "pp"
  piper.wait 1 on "compute"
  %v = piper.launch "F3" @f(%z) on "compute" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.output 0 %v : tensor<4x8xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %y = piper.recv "y" from @a tag 0 on "pp" : tensor<4x8xf32>
}

//--- 1f1b.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %nodes = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.piper.replicate %nodes over @mesh ["dp"] : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

//--- dualpipev.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "dualpipev" in %root : !transform.any_op
    transform.yield
  }
}

