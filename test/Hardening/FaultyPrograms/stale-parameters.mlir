// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted stale reads: a program that reads a parameter but never writes
// its update keeps computing with the step-1 value (a weight tied by hand
// across stages trains wrong silently).

piper.mesh @mesh axes = [pp = 3]
func.func @step(%w: tensor<4xf32> {piper.param = #piper.param<"wte", normal(0.02)>}) -> (tensor<4xf32> {piper.updated = "wte"}) {
  return %w : tensor<4xf32>
}

// Three stages read the embedding; only the last one, which owns the LM
// head's gradient, writes the update. The middle stage is reported first.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4xf32>
  piper.output 0 %w : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{@b {pp=1} reads parameter 'wte' (argument 0), but only @c {pp=2} writes its update (result 0): from the second step on it would read a stale value; every program that reads a parameter must write its update}}
  %w = piper.input 0 : tensor<4xf32>
}
piper.program @c role {pp = 2} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4xf32>
  piper.output 0 %w : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>},
                %v: tensor<4xf32> {piper.param = #piper.param<"v", zeros>})
    -> (tensor<4xf32> {piper.updated = "w"}, tensor<4xf32> {piper.updated = "v"}) {
  return %w, %v : tensor<4xf32>, tensor<4xf32>
}

// The second of two parameters is the stale one: each program writes the
// update of one parameter and reads both.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{@a {pp=0} reads parameter 'v' (argument 1), but only @b {pp=1} writes its update (result 1): from the second step on it would read a stale value; every program that reads a parameter must write its update}}
  %v = piper.input 1 : tensor<4xf32>
  piper.output 0 %w : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4xf32>
  %v = piper.input 1 : tensor<4xf32>
  piper.output 1 %v : tensor<4xf32>
}
