// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// transform.piper.recompute: what it rejects, naming the node.

func.func private @fwd(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %y = piper.relu %x : tensor<4xf64>
  %z = piper.tanh %y : tensor<4xf64>
  return %z, %y : tensor<4xf64>, tensor<4xf64>
}
func.func private @bwd(%y: tensor<4xf64>) -> tensor<4xf64> {
  return %y : tensor<4xf64>
}
func.func @f(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %r:2 = piper.dag -> tensor<4xf64>, tensor<4xf64> {
    %a:2 = piper.task "F{PP=0}" @fwd(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
    %b = piper.task "B{PP=0}" @bwd(%a#1) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf64>) -> tensor<4xf64>
    piper.dag_yield %a#0, %b : tensor<4xf64>, tensor<4xf64>
  }
  return %r#0, %r#1 : tensor<4xf64>, tensor<4xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{unknown op kind 'relux': expected a piper op name without its prefix, such as "attention"}}
    %r = transform.piper.recompute %n ops ["relux"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @fwd(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %y = piper.relu %x : tensor<4xf64>
  %z = piper.tanh %y : tensor<4xf64>
  return %z, %y : tensor<4xf64>, tensor<4xf64>
}
func.func private @bwd(%y: tensor<4xf64>) -> tensor<4xf64> {
  return %y : tensor<4xf64>
}
func.func @f(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %r:2 = piper.dag -> tensor<4xf64>, tensor<4xf64> {
    %a:2 = piper.task "F{PP=0}" @fwd(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
    %b = piper.task "B{PP=0}" @bwd(%a#1) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf64>) -> tensor<4xf64>
    piper.dag_yield %a#0, %b : tensor<4xf64>, tensor<4xf64>
  }
  return %r#0, %r#1 : tensor<4xf64>, tensor<4xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{recompute of 'F{PP=0}' with ops [tanh] recomputes nothing: no activation its backward reads comes from those ops}}
    %r = transform.piper.recompute %n ops ["tanh"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A forward whose outputs no backward reads (an inference-only chunk).
func.func private @fwd(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = piper.relu %x : tensor<4xf64>
  return %y : tensor<4xf64>
}
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %r = piper.dag -> tensor<4xf64> {
    %a = piper.task "F{PP=0}" @fwd(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf64>) -> tensor<4xf64>
    piper.dag_yield %a : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{PP=0}' has no backward node that reads its activations: there is nothing to recompute}}
    %r = transform.piper.recompute %n : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @fwd(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %y = piper.relu %x : tensor<4xf64>
  %z = piper.tanh %y : tensor<4xf64>
  return %z, %y : tensor<4xf64>, tensor<4xf64>
}
func.func private @bwd(%y: tensor<4xf64>) -> tensor<4xf64> {
  return %y : tensor<4xf64>
}
func.func @f(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %r:2 = piper.dag -> tensor<4xf64>, tensor<4xf64> {
    %a:2 = piper.task "F{PP=0}" @fwd(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
    %b = piper.task "B{PP=0}" @bwd(%a#1) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf64>) -> tensor<4xf64>
    piper.dag_yield %a#0, %b : tensor<4xf64>, tensor<4xf64>
  }
  return %r#0, %r#1 : tensor<4xf64>, tensor<4xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %r = transform.piper.recompute %n : (!transform.any_op) -> !transform.any_op
    %again = transform.piper.match_nodes {PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{PP=0}' is already recomputed by 'R{PP=0}'}}
    %r2 = transform.piper.recompute %again : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @bwd(%y: tensor<4xf64>) -> tensor<4xf64> {
  return %y : tensor<4xf64>
}
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %r = piper.dag -> tensor<4xf64> {
    %b = piper.task "B{PP=0}" @bwd(%x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf64>) -> tensor<4xf64>
    piper.dag_yield %b : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{the handle holds no forward node (pass F) to recompute}}
    %r = transform.piper.recompute %n : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %r = piper.annotate {PP = 0} -> tensor<4xf64> {
    %y = piper.relu %x : tensor<4xf64>
    piper.yield %y : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.piper.match_chunks {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{recompute acts on DAG nodes (piper.task), got 'piper.annotate'}}
    %r = transform.piper.recompute %c : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
