// RUN: piper-opt %s -split-input-file --piper-autodiff -verify-diagnostics

// The loss is a single scalar.
// expected-error@+1 {{autodiff: @two_results_are_rejected must return a single scalar loss such as tensor<f32>}}
func.func @two_results_are_rejected(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> (tensor<f32>, tensor<f32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %c : tensor<f32>, tensor<f32>
}

// -----

// A tensor result is not a loss.
// expected-error@+1 {{autodiff: @vector_loss_is_rejected must return a single scalar loss such as tensor<f32>}}
func.func @vector_loss_is_rejected(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> tensor<4xf32> {
  %r = piper.relu %w : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Ops without a VJP rule on the path from a parameter to the loss are named.
func.func @op_without_rule_is_rejected(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %labels: tensor<1xi64>) -> tensor<f32> {
  // expected-error@+1 {{cannot differentiate 'math.exp': it has no VJP rule (models are written with piper ops)}}
  %e = math.exp %w : tensor<4xf32>
  %r = piper.reshape %e : tensor<4xf32> -> tensor<1x4xf32>
  %l = piper.cross_entropy %r, %labels : tensor<1x4xf32>, tensor<1xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A module without parameters has nothing to differentiate.
// expected-error@+1 {{autodiff: no function with piper.param arguments to differentiate}}
module {
  func.func @no_params(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Region ops other than piper.annotate would hide parameter uses.
func.func @region_op_is_rejected(%w: tensor<2x2xf32> {piper.param = #piper.param<"w", zeros>}, %labels: tensor<2xi64>) -> tensor<f32> {
  // expected-error@+1 {{cannot differentiate 'scf.execute_region': region ops other than piper.annotate are not supported}}
  %r = scf.execute_region -> tensor<2x2xf32> {
    %a = piper.relu %w : tensor<2x2xf32>
    scf.yield %a : tensor<2x2xf32>
  }
  %l = piper.cross_entropy %r, %labels : tensor<2x2xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}
