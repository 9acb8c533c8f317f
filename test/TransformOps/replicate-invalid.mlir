// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// replicate checks the mesh, its axes and parameters split over them.

piper.mesh @mesh axes = [dp = 2, tp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{dp}]>>}) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{parameter 'w' (used by node 'F{PP=0}') is split over 'dp'; it cannot also be replicated over it}}
    %c = transform.piper.replicate %n over @mesh ["dp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

piper.mesh @mesh axes = [dp = 2]
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
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{mesh @mesh has no axis 'data' (axes: dp)}}
    %c = transform.piper.replicate %n over @mesh ["data"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

piper.mesh @mesh axes = [dp = 2]
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
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{axis 'dp' is listed twice}}
    %c = transform.piper.replicate %n over @mesh ["dp", "dp"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.replicate' op ZeRO stage must be 0, 1, 2 or 3, got 4}}
    %c = transform.piper.replicate %root over @mesh ["dp"] zero = 4 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.replicate' op needs at least one axis to replicate over}}
    %c = transform.piper.replicate %root over @mesh [] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A collective names axes of its mesh.
piper.mesh @mesh axes = [dp = 2]
func.func @bad_collective_axis_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.collective' op mesh @mesh has no axis 'tp' (axes: dp)}}
    %c = piper.collective "c" all_reduce %x over ["tp"] of @mesh stream "s" : tensor<4xf32>
    piper.dag_yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
