// RUN: piper-opt %s --piper-autodiff --piper-build-dag --transform-interpreter -verify-diagnostics | FileCheck %s
// transform.piper.match_nodes selects DAG nodes by their tags and pass; the
// DAG is built from this two-stage model first.

// CHECK: piper.dag
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  // Nodes are located at the chunk they come from (backward ones too).
  // expected-remark@+2 {{forward}}
  // expected-remark@+1 {{weight gradients}}
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %a = piper.linear %x, %w1 : tensor<2x8xf64>, tensor<8x4xf64> -> tensor<2x4xf64>
    piper.yield %a : tensor<2x4xf64>
  }
  // expected-remark@+2 {{forward}}
  // expected-remark@+1 {{weight gradients}}
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // PASS = "B" selects both halves of the split backward: BI and BW.
    %b1 = transform.piper.match_nodes {PP = 1, PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %n = transform.num_associations %b1 : (!transform.any_op) -> !transform.param<i64>
    // expected-remark@+1 {{PP=1 backward nodes 2}}
    transform.debug.emit_param_as_remark %n, "PP=1 backward nodes" : !transform.param<i64>
    %f = transform.piper.match_nodes {PP = "*", PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %f, "forward" : !transform.any_op
    %w = transform.piper.match_nodes {PASS = "BW"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %w, "weight gradients" : !transform.any_op
    transform.yield
  }
}
