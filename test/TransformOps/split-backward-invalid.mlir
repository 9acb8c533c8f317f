// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// split_backward needs the fused body --piper-build-dag=fuse-backward emits.

func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "B{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'B{PP=0}' has no BI and BW parts to split: its body is not the two calls --piper-build-dag=fuse-backward emits}}
    %p = transform.piper.split_backward %n : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4xf32> {
    %y = piper.relu %x : tensor<4xf32>
    piper.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.piper.match_chunks {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{split_backward acts on DAG nodes (piper.task), got 'piper.annotate'}}
    %p = transform.piper.split_backward %c : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
