// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// place checks the mesh, the axes, the coordinates, what it is applied to,
// and conflicts with earlier placements, naming what is wrong.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{axis 'pp' of @mesh has size 2; coordinate 2 is out of range}}
    %t = transform.piper.place %n on @mesh {pp = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{mesh @mesh has no axis 'tp' (axes: dp, pp)}}
    %t = transform.piper.place %n on @mesh {tp = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{unknown mesh @nowhere}}
    %t = transform.piper.place %n on @nowhere {pp = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Two directives may not put one node on two groups.
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %t0 = transform.piper.place %n on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{PP=0}' is already placed on {pp=0}; cannot also place it on {pp=1}}}
    %t1 = transform.piper.place %n on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// place acts on DAG nodes, not on chunks of a training step.
piper.mesh @mesh axes = [pp = 2]
func.func @f() {
  piper.annotate {PP = 0} {
    piper.yield
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.piper.match_chunks {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{place acts on DAG nodes (piper.task), got 'piper.annotate'}}
    %t = transform.piper.place %c on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.place' op coordinate of axis 'pp' must be a non-negative integer}}
    %t = transform.piper.place %root on @mesh {pp = -1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A transfer moves data between different groups.
func.func @same_group_transfer_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.transfer' op moves a value from {pp = 0 : i64} to the same devices}}
    %t = piper.transfer "x" %x from {pp = 0} to {pp = 0} stream "pp" : tensor<4xf32>
    piper.dag_yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
