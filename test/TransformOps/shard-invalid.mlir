// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// transform.piper.shard checks axes, divisibility, expert blocks, parameter
// patterns and earlier splits, naming what is wrong.

// The axis must exist.
piper.mesh @mesh axes = [dp = 2, ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02)>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{mesh @mesh has no axis 'tp' (axes: dp, ep)}}
    %c0 = transform.piper.shard %n expert over @mesh ["tp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// The experts must divide evenly over the axis.
piper.mesh @mesh axes = [dp = 2, ep = 3]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02)>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'experts.w' (experts): axis 'ep' of @mesh has size 3; dim 0 (size 4) is not divisible by it}}
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Expert sharding needs an expert block in the nodes' bodies.
piper.mesh @mesh axes = [ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %a = piper.relu %x : tensor<4x2xf32>
    piper.yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02)>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{no expert block (a chunk tagged EP) in the bodies of the nodes given ('F{PP=0}')}}
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A parameter already split over the axis on another dim is rejected.
piper.mesh @mesh axes = [ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02), placement = #piper.placement<@mesh, [{}, {ep}, {}]>>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'experts.w' is already split over 'ep' (dim 1)}}
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A parameter replicated over the axis cannot be split over it.
piper.mesh @mesh axes = [ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02), placement = #piper.placement<@mesh, [{}, {}, {}], replicated = {ep}>>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'experts.w' is replicated over 'ep'; it cannot also be split over it}}
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Sharding the experts twice is rejected.
piper.mesh @mesh axes = [ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02)>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{expert block {PP=0,EP=0} in the body of node 'F{PP=0}' is already sharded}}
    %c1 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A node placed on one coordinate of the axis cannot be sharded over it.
piper.mesh @mesh axes = [ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02)>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>, devices = {ep = 0}} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{PP=0}' is placed on {ep=0}; it must run on every 'ep' coordinate to be sharded over it}}
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Expert weights split over ep are not replicated over it (use where {EP = "none"}).
piper.mesh @mesh axes = [dp = 2, ep = 2]
func.func private @body(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %r = piper.annotate {PP = 0} -> tensor<4x2xf32> {
    %e = piper.annotate {EP = 0} -> tensor<4x2xf32> {
      %b = piper.dispatch %x, %idx {capacity = 4 : i64} : tensor<4x2xf32>, tensor<4x1xi64> -> tensor<4x4x2xf32>
      %y = piper.expert_ffn %b, %w, %w, %w : tensor<4x4x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32> -> tensor<4x4x2xf32>
      %c = piper.combine %y, %wts, %idx : tensor<4x4x2xf32>, tensor<4x1xf32>, tensor<4x1xi64> -> tensor<4x2xf32>
      piper.yield %c : tensor<4x2xf32>
    }
    piper.yield %e : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
func.func @step(%x: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %wts: tensor<4x1xf32>,
                %w: tensor<4x2x2xf32> {piper.param = #piper.param<"experts.w", normal(0.02)>}) -> tensor<4x2xf32> {
  %r = piper.dag -> tensor<4x2xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %idx, %wts, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4x2xf32>, tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
    piper.dag_yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c0 = transform.piper.shard %n expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'experts.w' (used by node 'F{PP=0}') is split over 'ep'; it cannot also be replicated over it}}
    %c1 = transform.piper.replicate %n over @mesh ["dp", "ep"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A pattern that matches no parameter is an error.
piper.mesh @mesh axes = [tp = 2]
func.func private @body(%x: tensor<2x4xf32>, %wq: tensor<4x4xf32>, %wo: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %r = piper.annotate {PP = 0} -> tensor<2x4xf32> {
    %q = piper.linear %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %q3 = piper.reshape %q : tensor<2x4xf32> -> tensor<1x2x4xf32>
    %o = piper.attention %q3, %q3, %q3 {num_heads = 2 : i64} : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
    %o2 = piper.reshape %o : tensor<1x2x4xf32> -> tensor<2x4xf32>
    %y = piper.linear %o2, %wo : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    piper.yield %y : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
func.func @step(%x: tensor<2x4xf32>,
                %wq: tensor<4x4xf32> {piper.param = #piper.param<"attn.wq", normal(0.02)>},
                %wo: tensor<4x4xf32> {piper.param = #piper.param<"attn.wo", normal(0.02)>}) -> tensor<2x4xf32> {
  %r = piper.dag -> tensor<2x4xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %wq, %wo) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    piper.dag_yield %a : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{column pattern 'attn.wz' matches no linear weight used by the nodes given}}
    %c0 = transform.piper.shard %n tensor over @mesh ["tp"] column ["attn.wz"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A column-parallel width must divide by the axis.
piper.mesh @mesh axes = [tp = 3]
func.func private @body(%x: tensor<2x4xf32>, %wq: tensor<4x4xf32>, %wo: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %r = piper.annotate {PP = 0} -> tensor<2x4xf32> {
    %q = piper.linear %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %q3 = piper.reshape %q : tensor<2x4xf32> -> tensor<1x2x4xf32>
    %o = piper.attention %q3, %q3, %q3 {num_heads = 1 : i64} : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
    %o2 = piper.reshape %o : tensor<1x2x4xf32> -> tensor<2x4xf32>
    %y = piper.linear %o2, %wo : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    piper.yield %y : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
func.func @step(%x: tensor<2x4xf32>,
                %wq: tensor<4x4xf32> {piper.param = #piper.param<"attn.wq", normal(0.02)>},
                %wo: tensor<4x4xf32> {piper.param = #piper.param<"attn.wo", normal(0.02)>}) -> tensor<2x4xf32> {
  %r = piper.dag -> tensor<2x4xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %wq, %wo) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    piper.dag_yield %a : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'attn.wq' (column-parallel): axis 'tp' of @mesh has size 3; dim 1 (size 4) is not divisible by it}}
    %c0 = transform.piper.shard %n tensor over @mesh ["tp"] column ["attn.wq"] row ["attn.wo"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Attention heads must divide by the axis.
piper.mesh @mesh axes = [tp = 4]
func.func private @body(%x: tensor<2x4xf32>, %wq: tensor<4x4xf32>, %wo: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %r = piper.annotate {PP = 0} -> tensor<2x4xf32> {
    %q = piper.linear %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %q3 = piper.reshape %q : tensor<2x4xf32> -> tensor<1x2x4xf32>
    %o = piper.attention %q3, %q3, %q3 {num_heads = 2 : i64} : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
    %o2 = piper.reshape %o : tensor<1x2x4xf32> -> tensor<2x4xf32>
    %y = piper.linear %o2, %wo : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    piper.yield %y : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
func.func @step(%x: tensor<2x4xf32>,
                %wq: tensor<4x4xf32> {piper.param = #piper.param<"attn.wq", normal(0.02)>},
                %wo: tensor<4x4xf32> {piper.param = #piper.param<"attn.wo", normal(0.02)>}) -> tensor<2x4xf32> {
  %r = piper.dag -> tensor<2x4xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %wq, %wo) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    piper.dag_yield %a : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{attention in the body of node 'F{PP=0}' has 2 heads; axis 'tp' of @mesh has size 4 and does not divide them}}
    %c0 = transform.piper.shard %n tensor over @mesh ["tp"] column ["attn.wq"] row ["attn.wo"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A parameter cannot be both column- and row-parallel.
piper.mesh @mesh axes = [tp = 2]
func.func private @body(%x: tensor<2x4xf32>, %wq: tensor<4x4xf32>, %wo: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %r = piper.annotate {PP = 0} -> tensor<2x4xf32> {
    %q = piper.linear %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %q3 = piper.reshape %q : tensor<2x4xf32> -> tensor<1x2x4xf32>
    %o = piper.attention %q3, %q3, %q3 {num_heads = 2 : i64} : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
    %o2 = piper.reshape %o : tensor<1x2x4xf32> -> tensor<2x4xf32>
    %y = piper.linear %o2, %wo : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    piper.yield %y : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
func.func @step(%x: tensor<2x4xf32>,
                %wq: tensor<4x4xf32> {piper.param = #piper.param<"attn.wq", normal(0.02)>},
                %wo: tensor<4x4xf32> {piper.param = #piper.param<"attn.wo", normal(0.02)>}) -> tensor<2x4xf32> {
  %r = piper.dag -> tensor<2x4xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %wq, %wo) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    piper.dag_yield %a : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'attn.wq' matches both a column and a row pattern}}
    %c0 = transform.piper.shard %n tensor over @mesh ["tp"] column ["attn.*"] row ["attn.wq"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Sharding the same parameters twice is rejected.
piper.mesh @mesh axes = [tp = 2]
func.func private @body(%x: tensor<2x4xf32>, %wq: tensor<4x4xf32>, %wo: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %r = piper.annotate {PP = 0} -> tensor<2x4xf32> {
    %q = piper.linear %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %q3 = piper.reshape %q : tensor<2x4xf32> -> tensor<1x2x4xf32>
    %o = piper.attention %q3, %q3, %q3 {num_heads = 2 : i64} : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
    %o2 = piper.reshape %o : tensor<1x2x4xf32> -> tensor<2x4xf32>
    %y = piper.linear %o2, %wo : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    piper.yield %y : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
func.func @step(%x: tensor<2x4xf32>,
                %wq: tensor<4x4xf32> {piper.param = #piper.param<"attn.wq", normal(0.02)>},
                %wo: tensor<4x4xf32> {piper.param = #piper.param<"attn.wo", normal(0.02)>}) -> tensor<2x4xf32> {
  %r = piper.dag -> tensor<2x4xf32> {
    %a = piper.task "F{PP=0}" @body(%x, %wq, %wo) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    piper.dag_yield %a : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %c0 = transform.piper.shard %n tensor over @mesh ["tp"] column ["attn.wq"] row ["attn.wo"] : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'attn.wq' is already split over 'tp' (dim 1)}}
    %c1 = transform.piper.shard %n tensor over @mesh ["tp"] column ["attn.wq"] row ["attn.wo"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Column and row patterns belong to tensor sharding.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{column, row and sequence_parallel apply to 'tensor' sharding only}}
    %c = transform.piper.shard %root expert over @mesh ["ep"] column ["w"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Tensor sharding needs parameter patterns.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{tensor sharding needs 'column' or 'row' parameter patterns}}
    %c = transform.piper.shard %root tensor over @mesh ["tp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// One axis at a time.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{shards over exactly one mesh axis, got 2}}
    %c = transform.piper.shard %root expert over @mesh ["ep", "dp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
