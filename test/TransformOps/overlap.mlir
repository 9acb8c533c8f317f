// RUN: piper-opt %s --transform-interpreter -split-input-file | FileCheck %s
// transform.piper.overlap pairs tasks that run together on one device group
// with their SM shares; transform.piper.set_stream moves communication nodes
// to a named stream.

// The forward of microbatch 1 overlaps the backward of microbatch 0, with
// DeepSeek-V3's split: 20 of 132 SMs stay free for communication.
// CHECK-LABEL: func.func @overlap_forward_with_backward
// CHECK: piper.task "F{MB=1}" {{.*}}overlap = "BI{MB=0}", pass = #piper<pass F>, sm_share = 4.242000e-01 : f64
// CHECK: piper.task "BI{MB=0}" {{.*}}overlap = "F{MB=1}", pass = #piper<pass BI>, sm_share = 4.242000e-01 : f64
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_forward_with_backward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %f0 = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %f1 = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b0 = piper.task "BI{MB=0}" @f(%f0) {tags = {MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b0, %f1 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.piper.match_nodes {MB = 1, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %b = transform.piper.match_nodes {MB = 0, PASS = "BI"} in %root : (!transform.any_op) -> !transform.any_op
    transform.piper.overlap %f with %b sm_shares [0.4242, 0.4242] : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// The transfers place creates move to their own stream.
// CHECK-LABEL: func.func @set_stream_of_transfers
// CHECK: piper.transfer "F{PP=0}#0->{pp=1}" %{{.*}} from {pp = 0 : i64} to {pp = 1 : i64} stream "pp_fwd"
piper.mesh @mesh axes = [pp = 2]
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @set_stream_of_transfers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @f(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.piper.set_stream %x1 "pp_fwd" : !transform.any_op
    transform.yield
  }
}
