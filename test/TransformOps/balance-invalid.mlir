// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// balance checks its stage count, cost source, device, mesh axes and
// memory limit, and that the model can be cut into that many stages,
// naming what is wrong.

// A three-op step: two linears and the loss. The first stage must reach
// the second linear (the first reads no activation, so it alone would
// have no input gradient), which leaves two places to start a stage.
func.func @step(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.02)>}, %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %y = piper.linear %h, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %loss = piper.cross_entropy %y, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{cannot split '@step' into 3 stages: it has 2 places a stage can start (op boundaries that exactly one activation crosses)}}
    transform.piper.balance %root into 3 stages : !transform.any_op
    transform.yield
  }
}

// -----

// No stages.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.balance' op needs at least one stage, got 0}}
    transform.piper.balance %root into 0 stages : !transform.any_op
    transform.yield
  }
}

// -----

// An unknown cost source.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.balance' op unknown cost source 'latency'; expected "roofline" or "flops"}}
    transform.piper.balance %root into 2 stages {cost = "latency"} : !transform.any_op
    transform.yield
  }
}

// -----

// Microbatches must be positive.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.balance' op microbatches must be positive, got 0}}
    transform.piper.balance %root into 2 stages {microbatches = 0} : !transform.any_op
    transform.yield
  }
}

// -----

// An unknown device.
func.func @step(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.02)>}, %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %y = piper.linear %h, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %loss = piper.cross_entropy %y, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{unknown device 'tpu4'; expected one of a100, h100, h200}}
    transform.piper.balance %root into 2 stages {device = "tpu4"} : !transform.any_op
    transform.yield
  }
}

// -----

// A gradient axis the mesh does not have.
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.02)>}, %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %y = piper.linear %h, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %loss = piper.cross_entropy %y, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{mesh @mesh has no axis 'ep' (axes: dp, pp)}}
    transform.piper.balance %root into 2 stages {grad_axes = ["ep"]} : !transform.any_op
    transform.yield
  }
}

// -----

// Mesh axes without a mesh.
func.func @step(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.02)>}, %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %y = piper.linear %h, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %loss = piper.cross_entropy %y, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{balance over mesh axes needs a piper.mesh in the model}}
    transform.piper.balance %root into 2 stages {expert_axes = ["ep"]} : !transform.any_op
    transform.yield
  }
}

// -----

// No split fits the memory limit: w alone takes 4 x 64 bytes.
func.func @step(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.02)>}, %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %y = piper.linear %h, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %loss = piper.cross_entropy %y, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{no split of '@step' into 2 stages keeps every stage within memory_limit = 200 bytes}}
    transform.piper.balance %root into 2 stages {memory_limit = 200} : !transform.any_op
    transform.yield
  }
}

// -----

// A PP chunk inside another chunk cannot be re-cut.
func.func @step(%w: tensor<4x4xf32> {piper.param = #piper.param<"w", normal(0.02)>}, %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = piper.annotate {LAYER = 0} -> tensor<2x4xf32> {
    %p = piper.annotate {PP = 0} -> tensor<2x4xf32> {
      %a = piper.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
      piper.yield %a : tensor<2x4xf32>
    }
    piper.yield %p : tensor<2x4xf32>
  }
  %y = piper.linear %h, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %loss = piper.cross_entropy %y, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{balance expects the PP chunks of '@step' at the top level of its body}}
    transform.piper.balance %root into 2 stages : !transform.any_op
    transform.yield
  }
}

// -----

// A payload without a step function.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{balance found no step function (a func.func with piper.param arguments) in the payload}}
    transform.piper.balance %root into 2 stages : !transform.any_op
    transform.yield
  }
}
