// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// Malformed filters are rejected when the directive is verified; a filter
// that selects nothing fails when it is applied.

func.func @no_chunk_has_pp_7() {
  piper.annotate {PP = 0} {
    piper.yield
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{filter {PP = 7 : i64} matches no chunk}}
    %c = transform.piper.match_chunks {PP = 7} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.match_chunks' op filter key 'pp' is malformed: tags are upper-case identifiers such as PP, EP, PASS or MB}}
    %c = transform.piper.match_chunks {pp = 0} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.match_chunks' op filter PASS = "FW" names no pass; expected F, B, BI, BW, UPD or "*"}}
    %c = transform.piper.match_chunks {PASS = "FW"} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.match_chunks' op filter value of 'PP' must be a non-negative integer, a string or "*"}}
    %c = transform.piper.match_chunks {PP = -1} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.match_chunks' op filter PASS takes a pass name such as "BW"}}
    %c = transform.piper.match_chunks {PASS = 2} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A node filter that selects nothing fails too.
func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @dag(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{filter {PASS = "UPD"} matches no DAG node}}
    %n = transform.piper.match_nodes {PASS = "UPD"} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.match_nodes' op filter key 'Pp' is malformed: tags are upper-case identifiers such as PP, EP, PASS or MB}}
    %n = transform.piper.match_nodes {Pp = 0} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
