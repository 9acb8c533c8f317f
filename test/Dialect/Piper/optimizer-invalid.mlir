// RUN: piper-opt %s -split-input-file -verify-diagnostics

// The learning rate is positive.
func.func @zero_lr_is_rejected(%p: tensor<4xf32>) {
  // expected-error@+1 {{'piper.sgd_update' op lr = 0 must be > 0}}
  %a, %b = piper.sgd_update %p, %p, %p {lr = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

// Momentum lies in [0, 1).
func.func @momentum_one_is_rejected(%p: tensor<4xf32>) {
  // expected-error@+1 {{'piper.sgd_update' op momentum = 1 must be >= 0 and < 1}}
  %a, %b = piper.sgd_update %p, %p, %p {lr = 0.1 : f64, momentum = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

// Weight decay is not negative.
func.func @negative_decay_is_rejected(%p: tensor<4xf32>) {
  // expected-error@+1 {{'piper.sgd_update' op weight_decay = -0.1 must be >= 0}}
  %a, %b = piper.sgd_update %p, %p, %p {lr = 0.1 : f64, weight_decay = -0.1 : f64} : tensor<4xf32>
  return
}

// -----

// Betas lie in [0, 1).
func.func @beta_out_of_range_is_rejected(%p: tensor<4xf32>, %t: tensor<i64>) {
  // expected-error@+1 {{'piper.adamw_update' op beta2 = 1.5 must be >= 0 and < 1}}
  %a, %b, %c = piper.adamw_update %p, %p, %p, %p, %t {lr = 0.1 : f64, beta2 = 1.5 : f64} : tensor<4xf32>
  return
}

// -----

// eps is positive.
func.func @zero_eps_is_rejected(%p: tensor<4xf32>, %t: tensor<i64>) {
  // expected-error@+1 {{'piper.adamw_update' op eps = 0 must be > 0}}
  %a, %b, %c = piper.adamw_update %p, %p, %p, %p, %t {lr = 0.1 : f64, eps = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

// Parameter, gradient and state share one type.
func.func @mismatched_types_are_rejected(%p: tensor<4xf32>, %g: tensor<4xf64>) {
  // expected-error@+1 {{'piper.sgd_update' op failed to verify that all of {param, grad, momentum_buffer, new_param, new_momentum_buffer} have same type}}
  %a, %b = "piper.sgd_update"(%p, %g, %p) <{lr = 0.1 : f64}> : (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// The step is a rank-0 i64 tensor.
func.func @float_step_is_rejected(%p: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error@+1 {{'piper.adamw_update' op operand #4 must be 0D tensor of 64-bit signless integer values, but got 'tensor<f32>'}}
  %a, %b, %c = "piper.adamw_update"(%p, %p, %p, %p, %t) <{lr = 0.1 : f64}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// State slots are a closed set.
// expected-error@+1 {{unknown optimizer state slot 'velocity'; expected momentum_buffer, exp_avg, exp_avg_sq or step}}
func.func private @unknown_slot_is_rejected(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, tensor<4xf32> {piper.state = #piper.state<"w", "velocity">})

// -----

// State belongs to a parameter of the function.
// expected-error@+1 {{argument #0 is optimizer state of 'w', which is not a parameter of the function}}
func.func private @state_of_unknown_param_is_rejected(tensor<4xf32> {piper.state = #piper.state<"w", "exp_avg">})

// -----

// Moments have the parameter's type.
// expected-error@+1 {{argument #1 is the exp_avg of 'w' and must be 'tensor<4xf32>', got 'tensor<4xf64>'}}
func.func private @state_type_is_checked(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, tensor<4xf64> {piper.state = #piper.state<"w", "exp_avg">})

// -----

// The step count is a rank-0 i64 tensor.
// expected-error@+1 {{result #0 is the step of 'w' and must be 'tensor<i64>', got 'tensor<f32>'}}
func.func private @step_type_is_checked(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> (tensor<f32> {piper.state = #piper.state<"w", "step">})

// -----

// An updated parameter keeps its type.
// expected-error@+1 {{result #0 is the update of parameter 'w' of type 'tensor<4xf32>' but has type 'tensor<8xf32>'}}
func.func private @update_type_is_checked(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> (tensor<8xf32> {piper.updated = "w"})
