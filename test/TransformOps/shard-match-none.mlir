// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// The tag-filter value "none" means "tag absent": {EP = "none"} selects
// dense work outside expert blocks, the complement of {EP = "*"}. Each match
// is reported with a remark.

func.func @absent_tag(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark@+1 {{no EP}}
  %a = piper.annotate {PP = 0} -> tensor<4xf32> {
    %r = piper.relu %x : tensor<4xf32>
    piper.yield %r : tensor<4xf32>
  }
  %b = piper.annotate {PP = 1} -> tensor<4xf32> {
    // expected-remark@+1 {{has EP}}
    %e = piper.annotate {EP = 3} -> tensor<4xf32> {
      %r = piper.relu %a : tensor<4xf32>
      piper.yield %r : tensor<4xf32>
    }
    piper.yield %e : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %dense = transform.piper.match_chunks {EP = "none", PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %dense, "no EP" : !transform.any_op
    %ep = transform.piper.match_chunks {EP = "*"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %ep, "has EP" : !transform.any_op
    transform.yield
  }
}

// -----

// DAG nodes: a node's tags are its top-level chunk's, so {EP = "none"}
// selects it even when its body holds an expert block; replicate's `where`
// looks inside bodies (see shard-expert.mlir).
func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @nodes(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-remark@+1 {{dense node}}
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1,EP=1}" @body(%a) {tags = {PP = 1, EP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %dense = transform.piper.match_nodes {EP = "none"} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %dense, "dense node" : !transform.any_op
    transform.yield
  }
}

// -----

// "none" is not a pass.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{filter PASS = "none" names no pass; expected F, B, BI, BW, UPD or "*"}}
    %n = transform.piper.match_nodes {PASS = "none"} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
