// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics | FileCheck %s
// transform.piper.match_chunks selects the outermost chunks whose tags match
// a filter; each match is reported with a remark so the test sees exactly
// which chunks were selected.

// CHECK-LABEL: func.func @stages
func.func @stages(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark@+2 {{all}}
  // expected-remark@+1 {{PP=0}}
  %a = piper.annotate {PP = 0} -> tensor<4xf32> {
    %r = piper.relu %x : tensor<4xf32>
    piper.yield %r : tensor<4xf32>
  }
  // expected-remark@+2 {{all}}
  // expected-remark@+1 {{PP=1}}
  %b = piper.annotate {PP = 1} -> tensor<4xf32> {
    // Nested chunks carry their parents' tags too.
    // expected-remark@+1 {{has EP}}
    %e = piper.annotate {EP = 3} -> tensor<4xf32> {
      %r = piper.relu %a : tensor<4xf32>
      piper.yield %r : tensor<4xf32>
    }
    piper.yield %e : tensor<4xf32>
  }
  // expected-remark@+3 {{all}}
  // expected-remark@+2 {{backward}}
  // expected-remark@+1 {{BW of PP=1}}
  piper.annotate {PP = 1} pass = BW {
    piper.yield
  }
  // expected-remark@+2 {{all}}
  // expected-remark@+1 {{backward}}
  piper.annotate {PP = 0} pass = BI {
    piper.yield
  }
  return %b : tensor<4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_chunks {} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %all, "all" : !transform.any_op
    %pp0 = transform.piper.match_chunks {PP = 0, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %pp0, "PP=0" : !transform.any_op
    %fwd = transform.piper.match_chunks {PP = 1, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %fwd, "PP=1" : !transform.any_op
    %ep = transform.piper.match_chunks {EP = "*"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %ep, "has EP" : !transform.any_op
    %b = transform.piper.match_chunks {PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %b, "backward" : !transform.any_op
    %bw = transform.piper.match_chunks {PP = 1, PASS = "BW"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %bw, "BW of PP=1" : !transform.any_op
    transform.yield
  }
}
