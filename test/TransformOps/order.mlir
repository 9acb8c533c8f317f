// RUN: piper-opt %s --transform-interpreter -split-input-file | FileCheck %s
// transform.piper.order adds temporal edges from every node of a group to
// every node of the next; nodes of one group stay unordered among
// themselves, and existing edges are kept.

// Stage 0 of a two-microbatch 1F1B: F0, then F1 together with both halves of
// B0, then B1.
// CHECK-LABEL: func.func @order_groups_in_sequence
// CHECK:      piper.task "F{PP=0,MB=0}"
// CHECK-NOT:  after
// CHECK:      piper.task "F{PP=0,MB=1}" {{.*}}after = ["F{PP=0,MB=0}"]
// CHECK:      piper.task "BI{PP=0,MB=0}" {{.*}}after = ["F{PP=0,MB=0}"]
// CHECK:      piper.task "BW{PP=0,MB=0}" {{.*}}after = ["F{PP=0,MB=0}"]
// CHECK:      piper.task "BI{PP=0,MB=1}" {{.*}}after = ["F{PP=0,MB=1}", "BI{PP=0,MB=0}", "BW{PP=0,MB=0}"]
// CHECK:      piper.task "BW{PP=0,MB=1}" {{.*}}after = ["F{PP=0,MB=1}", "BI{PP=0,MB=0}", "BW{PP=0,MB=0}"]
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func private @b(tensor<4xf32>) -> tensor<4xf32>
func.func @order_groups_in_sequence(%x0: tensor<4xf32>, %x1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %f0 = piper.task "F{PP=0,MB=0}" @f(%x0) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %f1 = piper.task "F{PP=0,MB=1}" @f(%x1) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %i0 = piper.task "BI{PP=0,MB=0}" @b(%f0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    %w0 = piper.task "BW{PP=0,MB=0}" @b(%i0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>} : (tensor<4xf32>) -> tensor<4xf32>
    %i1 = piper.task "BI{PP=0,MB=1}" @b(%f1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    %w1 = piper.task "BW{PP=0,MB=1}" @b(%i1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BW>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %w0, %w1 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.piper.order [{PP = 0, MB = 0, PASS = "F"},
                           [{PP = 0, MB = 1, PASS = "F"}, {PP = 0, MB = 0, PASS = "B"}],
                           {PP = 0, MB = 1, PASS = "B"}] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Edges already there are kept and not repeated; placed nodes of one device
// group may be ordered.
// CHECK-LABEL: func.func @order_keeps_existing_edges
// CHECK:      piper.task "F{MB=1}" {{.*}}after = ["F{MB=0}"], devices = {pp = 1 : i64}
// CHECK:      piper.task "F{MB=2}" {{.*}}after = ["X", "F{MB=1}"], devices = {pp = 1 : i64}
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @order_keeps_existing_edges(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 1}, after = ["F{MB=0}"]} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "F{MB=2}" @f(%x) {tags = {MB = 2}, pass = #piper<pass F>, devices = {pp = 1}, after = ["X"]} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "X" @f(%x) {tags = {}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.piper.order [{MB = 0}, {MB = 1}, {MB = 2}] in %root : !transform.any_op
    transform.yield
  }
}
