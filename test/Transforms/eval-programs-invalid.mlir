// RUN: piper-opt %s --split-input-file --piper-eval-programs -verify-diagnostics

// No program outputs the loss: nothing to evaluate.
piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) -> tensor<f32> {
  %l = tensor.empty() : tensor<f32>
  return %l : tensor<f32>
}
// expected-error@+1 {{no program outputs the loss (step result 0); there is nothing to evaluate}}
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4xf32>
}

// -----

// Evaluation programs are derived once.
piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) -> tensor<f32> {
  %l = tensor.empty() : tensor<f32>
  return %l : tensor<f32>
}
// expected-error@+1 {{is already an evaluation program; derive them once}}
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] attributes {piper_plan.eval_of = @b} {
  %x = piper.input 0 : tensor<4xf32>
}

// -----

// The loss needs a receive whose send is missing.
piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] {
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{the loss needs recv 'x' (from @a, tag 0), which no send matches}}
  %x = piper.recv "x" from @a tag 0 on "compute" : tensor<4xf32>
  piper.output 0 %x : tensor<4xf32>
}
