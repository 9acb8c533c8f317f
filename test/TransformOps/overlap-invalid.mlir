// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// transform.piper.overlap checks that a pair can run together on one
// device group, and that SM shares are fractions of one device.

// A pair shares one device group.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_across_device_groups(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %q = transform.piper.match_nodes {MB = 1} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{cannot overlap 'F{MB=0}' on {pp=0} with 'F{MB=1}' on {pp=1}: a pair shares one device group}}
    transform.piper.overlap %p with %q : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// Nodes ordered by a data edge cannot run together.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_of_dependent_nodes(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%a) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %q = transform.piper.match_nodes {MB = 1} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{cannot overlap 'F{MB=0}' with 'F{MB=1}': 'F{MB=1}' runs after 'F{MB=0}' by data or temporal edges}}
    transform.piper.overlap %p with %q : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// Nor can nodes ordered by a temporal edge.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_of_ordered_nodes(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}, after = ["F{MB=1}"]} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %q = transform.piper.match_nodes {MB = 1} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{cannot overlap 'F{MB=0}' with 'F{MB=1}': 'F{MB=0}' runs after 'F{MB=1}' by data or temporal edges}}
    transform.piper.overlap %p with %q : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// A node is not paired with itself.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_with_itself(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %q = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{cannot overlap 'F{MB=0}' with itself}}
    transform.piper.overlap %p with %q : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// The handles are paired element by element.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_uneven_handles(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %q = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{pairs the tasks of two handles element by element, but they hold 2 and 1 ops}}
    transform.piper.overlap %p with %q : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// A node overlaps one partner.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @overlap_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{MB=0}" @f(%x) {tags = {MB = 0}, pass = #piper<pass F>, devices = {pp = 0}, overlap = "G"} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{MB=1}" @f(%x) {tags = {MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.piper.match_nodes {MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %q = transform.piper.match_nodes {MB = 1} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{MB=0}' already overlaps 'G'}}
    transform.piper.overlap %p with %q : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// SM shares: two fractions in (0, 1] summing to at most 1.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.overlap' op SM shares sum to 1.1, more than the whole device}}
    transform.piper.overlap %root with %root sm_shares [0.5, 0.6] : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// SM shares: two fractions in (0, 1] summing to at most 1.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.overlap' op SM share 0 is not in (0, 1]}}
    transform.piper.overlap %root with %root sm_shares [0.0, 0.5] : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// SM shares: two fractions in (0, 1] summing to at most 1.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.overlap' op sm_shares holds one share per task of a pair, got 1 numbers}}
    transform.piper.overlap %root with %root sm_shares [0.5] : !transform.any_op, !transform.any_op
    transform.yield
  }
}

// -----

// set_stream acts on communication nodes only.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @set_stream_of_a_task(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{set_stream acts on communication nodes (piper.transfer, piper.collective), got 'piper.task'}}
    transform.piper.set_stream %n "s" : !transform.any_op
    transform.yield
  }
}
