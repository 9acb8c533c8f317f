// RUN: piper-opt %s -split-input-file -verify-diagnostics

// Initialisers are normal, zeros and ones.
// expected-error@+1 {{unknown initialiser 'xavier'; expected normal(std), zeros or ones}}
func.func private @unknown_initialiser_is_rejected(tensor<8xf32> {piper.param = #piper.param<"w", xavier>})

// -----

// normal needs its standard deviation.
// expected-error@+1 {{parameter 'w': normal initialisation needs a standard deviation, e.g. normal(0.02)}}
func.func private @normal_without_std_is_rejected(tensor<8xf32> {piper.param = #piper.param<"w", normal>})

// -----

// The standard deviation is positive.
// expected-error@+1 {{parameter 'w': standard deviation must be > 0, got -0.5}}
func.func private @negative_std_is_rejected(tensor<8xf32> {piper.param = #piper.param<"w", normal(-0.5)>})

// -----

// zeros takes no argument.
// expected-error@+1 {{parameter 'w': zeros initialisation takes no argument}}
func.func private @zeros_with_argument_is_rejected(tensor<8xf32> {piper.param = #piper.param<"w", zeros(1.0)>})

// -----

// Parameters need names.
// expected-error@+1 {{parameter needs a non-empty name}}
func.func private @empty_name_is_rejected(tensor<8xf32> {piper.param = #piper.param<"", zeros>})

// -----

// Parameter names are unique in a model.
// expected-error@+1 {{parameter 'w' (argument #1): name is also used by argument #0}}
func.func private @duplicate_name_is_rejected(
    tensor<8xf32> {piper.param = #piper.param<"w", zeros>},
    tensor<8xf32> {piper.param = #piper.param<"w", ones>})

// -----

// Parameters are float tensors.
// expected-error@+1 {{parameter 'ids' (argument #0): parameters are ranked float tensors, got 'tensor<8xi64>'}}
func.func private @integer_param_is_rejected(tensor<8xi64> {piper.param = #piper.param<"ids", zeros>})

// -----

// A parameter's placement lives inside the parameter attribute.
piper.mesh @m axes = [dp = 2]
// expected-error@+1 {{parameter 'w' (argument #0): has a separate piper.placement; put it inside #piper.param as `placement = ...`}}
func.func private @separate_placement_is_rejected(
    tensor<8xf32> {piper.param = #piper.param<"w", zeros>,
                   piper.placement = #piper.placement<@m, [{dp}]>})

// -----

// The placement inside a parameter is verified against its type.
piper.mesh @m axes = [tp = 3]
// expected-error@+1 {{parameter 'w' (argument #0): axis 'tp' of @m has size 3; dim 0 (size 8) is not divisible by it}}
func.func private @param_placement_is_verified(
    tensor<8xf32> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@m, [{tp}]>>})

// -----

// piper.param must hold a #piper.param.
// expected-error@+1 {{'piper.param' on argument #0 must be a #piper.param, got "w"}}
func.func private @param_of_wrong_kind_is_rejected(tensor<8xf32> {piper.param = "w"})

// -----

// piper.param marks arguments, not results.
// expected-error@+1 {{unknown piper result attribute 'piper.param'}}
func.func private @param_on_result_is_rejected() -> (tensor<8xf32> {piper.param = #piper.param<"w", zeros>})
