// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// transform.piper.order rejects orders that could never run, naming the
// nodes: cycles with the data and temporal edges, edges between device
// groups, and filters that select nothing; malformed groups fail to verify.

// Ordering a consumer before its producer closes a cycle with the data edge.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @order_cycle_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "BI{PP=0}" @f(%a) {tags = {PP = 0}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{the order would form a cycle: 'F{PP=0}' -> 'BI{PP=0}' -> 'F{PP=0}'}}
    transform.piper.order [{PASS = "BI"}, {PASS = "F"}] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A cycle through an edge that was already there.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @order_cycle_through_existing_edge(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, after = ["F{MB=1}"]} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{the order would form a cycle: 'F{MB=0}' -> 'F{MB=1}' -> 'F{MB=0}'}}
    transform.piper.order [{MB = 0}, {MB = 1}] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Temporal edges stay on one device group: across groups the order is the
// data edge's (a transfer).
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @order_across_device_groups_is_rejected(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @f(%x) {tags = {PP = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{cannot order 'F{PP=1}' on {pp=1} after 'F{PP=0}' on {pp=0}: temporal edges stay within one device group}}
    transform.piper.order [{PP = 0}, {PP = 1}] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A placed node and an unplaced one are on different groups too.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @order_placed_after_unplaced_is_rejected(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @f(%x) {tags = {PP = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{cannot order 'F{PP=1}' on {pp=1} after 'F{PP=0}' on no device group: temporal edges stay within one device group}}
    transform.piper.order [{PP = 0}, {PP = 1}] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A filter that selects nothing is a mistake, not an empty group.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @order_filter_matching_nothing(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{filter {MB = 3 : i64, PP = 0 : i64} of group #1 matches no DAG node}}
    transform.piper.order [{PP = 0}, [{PASS = "F"}, {PP = 0, MB = 3}]] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A group is a filter or a non-empty list of filters.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.order' op group #1 must be a tag filter (a dictionary) or a non-empty list of tag filters}}
    transform.piper.order [{PP = 0}, []] in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Filters are checked like match_nodes'.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{filter key 'pp' is malformed: tags are upper-case identifiers such as PP, EP, PASS or MB}}
    transform.piper.order [{pp = 0}] in %root : !transform.any_op
    transform.yield
  }
}
