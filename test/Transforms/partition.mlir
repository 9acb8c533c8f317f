// RUN: split-file %s %t
// --piper-partition turns a scheduled DAG into one program per device role
// and --piper-verify-programs accepts the result.
//
// 1F1B on a 2-stage MLP over dp = 2, 4 microbatches, data-parallel gradients.
// RUN: piper-gen --config=tiny-mlp --layers=2 --pp=2 --mesh=dp=2,pp=2 -o %t/mlp.mlir
// RUN: piper-opt %t/mlp.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/1f1b.out.mlir
// RUN: FileCheck %s --input-file=%t/1f1b.out.mlir --enable-var-scope
//
// DualPipeV: 4 stages on 2 ranks; the second task of an overlapped F&B pair
// runs on its own stream.
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --mesh=pp=2 -o %t/mlp4v.mlir
// RUN: piper-opt %t/mlp4v.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/dualpipev.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/dpv.out.mlir
// RUN: FileCheck %s --check-prefix=DPV --input-file=%t/dpv.out.mlir
//
// Replicas share programs: the MoE over dp = 2 x ep = 2 and over dp = 8 x
// ep = 4 gives the same two programs (only the mesh line differs).
// RUN: piper-gen --config=tiny-moe --pp=2 --mesh=dp=8,pp=2,ep=4 --experts=8 -o %t/moe-large.mlir
// RUN: piper-gen --config=tiny-moe --pp=2 --mesh=dp=2,pp=2,ep=2 --experts=8 -o %t/moe-small8.mlir
// RUN: piper-opt %t/moe-small8.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/moe.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/moe-small.out.mlir
// RUN: piper-opt %t/moe-large.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/moe.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/moe-large.out.mlir
// RUN: grep -v 'piper.mesh' %t/moe-small.out.mlir > %t/moe-small.txt
// RUN: grep -v 'piper.mesh' %t/moe-large.out.mlir > %t/moe-large.txt
// RUN: diff %t/moe-small.txt %t/moe-large.txt
// RUN: FileCheck %s --check-prefix=MOE --input-file=%t/moe-large.out.mlir

// Rank 0 reads its microbatches and parameters, runs its forwards and
// backwards in 1F1B order on "compute", moves activations on "pp" (each
// send waits for the event recorded after the launch that produced it),
// and all-reduces its gradients on "dp_grad" before the update.
// CHECK-LABEL: piper.program @step.pp0 role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "dp_grad"] {
// CHECK:         %[[X0:.*]] = piper.input 6 microbatch 0 of 4 along 0 : tensor<4x16xf32>
// CHECK-NEXT:    %[[W:.*]] = piper.input 0 : tensor<16x32xf32>
// CHECK:         %[[F0:.*]]:2 = piper.launch "F{PP=0,MB=0}" @step.F.PP0(%[[X0]], %[[W]], %{{.*}}) on "compute"
// CHECK-NEXT:    piper.record 0 on "compute"
// CHECK-NEXT:    piper.wait 0 on "pp"
// CHECK-NEXT:    piper.send "F{PP=0,MB=0}#0->{pp=1}" %[[F0]]#0 to @step.pp1 tag 0 on "pp" : tensor<4x32xf32>
// CHECK-NEXT:    %[[G0:.*]] = piper.recv "BI{PP=1,MB=0}#2->{pp=0}" from @step.pp1 tag 0 on "pp" : tensor<4x32xf32>
// CHECK-NEXT:    piper.record 1 on "pp"
// CHECK-NEXT:    piper.launch "F{PP=0,MB=1}"
// CHECK-NEXT:    piper.record 2 on "compute"
// CHECK-NEXT:    piper.wait 1 on "compute"
// CHECK-NEXT:    %[[B0:.*]] = piper.launch "BI{PP=0,MB=0}" @step.BI.PP0(%[[F0]]#1, %[[G0]]) on "compute"
// CHECK-NEXT:    %[[BW0:.*]]:2 = piper.launch "BW{PP=0,MB=0}" @step.BW.PP0(%[[X0]], %[[W]], %{{.*}}, %[[B0]]) on "compute"
// Each microbatch's weight gradient is added into the running sum right
// after the launch that computes it, so none outlives its microbatch; the
// last addition scales by 1/4.
// CHECK:         %[[BW1:.*]]:2 = piper.launch "BW{PP=0,MB=1}"
// CHECK-NEXT:    %[[S1:.*]] = piper.sum "accumulate(BW{PP=0}#0)" %[[BW0]]#0, %[[BW1]]#0 scale 1.000000e+00 on "compute"
// CHECK:         %[[BW2:.*]]:2 = piper.launch "BW{PP=0,MB=2}"
// CHECK-NEXT:    %[[S2:.*]] = piper.sum "accumulate(BW{PP=0}#0)" %[[S1]], %[[BW2]]#0 scale 1.000000e+00 on "compute"
// CHECK:         %[[BW3:.*]]:2 = piper.launch "BW{PP=0,MB=3}"
// CHECK-NEXT:    %[[S:.*]] = piper.sum "accumulate(BW{PP=0}#0)" %[[S2]], %[[BW3]]#0 scale 2.500000e-01 on "compute"
// CHECK:         %[[R:.*]] = piper.comm "all_reduce(accumulate(BW{PP=0}#0)#0)" all_reduce %[[S]] over ["dp"] on "dp_grad" : tensor<16x32xf32>
// CHECK:         piper.record [[EV:[0-9]+]] on "dp_grad"
// CHECK-NEXT:    piper.wait [[EV]] on "compute"
// CHECK-NEXT:    %[[U:.*]]:8 = piper.launch "UPD{PP=0}" @step.UPD.PP0(%{{.*}}, %[[W]], %[[R]],
// CHECK-NEXT:    piper.output 1 %[[U]]#1 : tensor<16x32xf32>
// The last stage receives first and computes the loss.
// CHECK-LABEL: piper.program @step.pp1 role {pp = 1 : i64}
// CHECK:         %[[A0:.*]] = piper.recv "F{PP=0,MB=0}#0->{pp=1}" from @step.pp0 tag 0 on "pp" : tensor<4x32xf32>
// CHECK-NEXT:    piper.record 0 on "pp"
// CHECK-NEXT:    piper.wait 0 on "compute"
// CHECK-NEXT:    piper.launch "F{PP=1,MB=0}" @step.F.PP1(%[[A0]],
// CHECK:         %[[L:.*]] = piper.sum "accumulate(F{PP=1}#0)" {{.*}} scale 2.500000e-01
// CHECK:         piper.output 0 %[[L]] : tensor<f32>

// DPV-LABEL: piper.program @step.pp0 role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "compute_overlap"]
// DPV:       piper.launch "BI{PP=3,MB=1}" {{.*}} on "compute" {overlap = "F{PP=0,MB=3}"}
// DPV:       piper.launch "F{PP=0,MB=3}" {{.*}} on "compute_overlap" {overlap = "BI{PP=3,MB=1}"}
// DPV-LABEL: piper.program @step.pp1 role {pp = 1 : i64}

// Two programs; the expert all-to-alls stay inside the launched bodies.
// MOE-COUNT-2: piper.program
// MOE-NOT:     piper.program
// MOE-NOT:     piper.comm {{.*}} all_to_all
// MOE-LABEL:   func.func private @step.F.PP0
// MOE:         piper.collective "to_experts{PP=0,EP=0}" all_to_all

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

//--- moe.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %nodes = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %ep = transform.piper.shard %nodes expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    %dense = transform.piper.replicate %nodes over @mesh ["dp", "ep"] zero = 1 where {EP = "none"} : (!transform.any_op) -> !transform.any_op
    %experts = transform.piper.replicate %nodes over @mesh ["dp"] zero = 1 where {EP = "*"} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}
