// RUN: piper-opt %s -split-input-file -verify-diagnostics

// Axis names must be unique within a mesh.
// expected-error@+1 {{'piper.mesh' op duplicate axis name 'dp' in mesh @m}}
piper.mesh @m axes = [dp = 2, tp = 2, dp = 4]

// -----

// An axis of size 0 holds no devices.
// expected-error@+1 {{mesh axis 'dp' has size 0; sizes must be >= 1}}
piper.mesh @m axes = [dp = 0]

// -----

// Negative sizes are rejected the same way.
// expected-error@+1 {{mesh axis 'tp' has size -2; sizes must be >= 1}}
piper.mesh @m axes = [dp = 2, tp = -2]

// -----

// A mesh needs at least one axis.
// expected-error@+1 {{'piper.mesh' op mesh @m needs at least one axis}}
piper.mesh @m axes = []

// -----

// Link classes are a closed set.
// expected-error@+1 {{unknown link class 'tokenring'; expected nvlink, pcie, infiniband, roce, efa or ethernet}}
piper.mesh @m axes = [dp = 2 : tokenring]

// -----

// Link properties are bandwidth and latency only.
// expected-error@+1 {{unknown link property 'jitter'; expected bandwidth or latency}}
piper.mesh @m axes = [dp = 2 : nvlink(jitter = 1.0)]

// -----

// A link property may be given once.
// expected-error@+1 {{link property 'latency' given twice}}
piper.mesh @m axes = [dp = 2 : nvlink(latency = 1.0, latency = 2.0)]

// -----

// Link properties are numbers.
// expected-error@+1 {{link property 'bandwidth' must be a number}}
piper.mesh @m axes = [dp = 2 : nvlink(bandwidth = "fast")]

// -----

// Empty parentheses are a typo, not a link description.
// expected-error@+1 {{empty link property list; give bandwidth and/or latency or drop the parentheses}}
piper.mesh @m axes = [dp = 2 : nvlink()]

// -----

// Axis names are not empty.
// expected-error@+1 {{mesh axis needs a non-empty name}}
piper.mesh @m axes = ["" = 2]

// -----

// Bandwidth must be positive.
// expected-error@+1 {{mesh axis 'dp' has bandwidth 0; it must be > 0}}
piper.mesh @m axes = [dp = 2 : nvlink(bandwidth = 0.0)]

// -----

// Latency must be positive.
// expected-error@+1 {{mesh axis 'dp' has latency -1; it must be > 0}}
piper.mesh @m axes = [dp = 2 : nvlink(latency = -1.0)]

// -----

// A placement must name an existing mesh.
// expected-error@+1 {{argument #0 placement: unknown mesh @nowhere}}
func.func private @unknown_mesh_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@nowhere, [{dp}]>})

// -----

// A placement's mesh symbol must be a piper.mesh.
func.func private @not_a_mesh()
// expected-error@+1 {{argument #0 placement: @not_a_mesh is a 'func.func', not a piper.mesh}}
func.func private @symbol_that_is_not_a_mesh_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@not_a_mesh, [{dp}]>})

// -----

// Axes in a placement must exist in its mesh.
piper.mesh @m axes = [dp = 2, tp = 2]
// expected-error@+1 {{argument #0 placement: mesh @m has no axis 'ep' (axes: dp, tp)}}
func.func private @unknown_axis_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@m, [{ep}]>})

// -----

// Replicated axes must exist too.
piper.mesh @m axes = [dp = 2, tp = 2]
// expected-error@+1 {{result #0 placement: mesh @m has no axis 'pp' (axes: dp, tp)}}
func.func private @unknown_replicated_axis_is_rejected()
    -> (tensor<8xf32> {piper.placement = #piper.placement<@m, [{}], replicated = {pp}>})

// -----

// An axis may split only one dimension.
piper.mesh @m axes = [dp = 2, tp = 2]
// expected-error@+2 {{mesh axis 'tp' is used more than once in the placement}}
func.func private @axis_on_two_dims_is_rejected(
    tensor<8x8xf32> {piper.placement = #piper.placement<@m, [{tp}, {tp}]>})

// -----

// An axis may not both split a dimension and replicate it.
piper.mesh @m axes = [dp = 2, tp = 2]
// expected-error@+2 {{mesh axis 'dp' is used more than once in the placement}}
func.func private @split_and_replicated_axis_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@m, [{dp}], replicated = {dp}>})

// -----

// An axis may appear once within a dimension.
piper.mesh @m axes = [dp = 2, tp = 2]
// expected-error@+2 {{mesh axis 'tp' is used more than once in the placement}}
func.func private @axis_twice_in_one_dim_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@m, [{tp, tp}]>})

// -----

// Each dimension must divide evenly over its axis.
piper.mesh @m axes = [dp = 2, tp = 4]
// expected-error@+1 {{argument #1 placement: axis 'tp' of @m has size 4; dim 1 (size 6) is not divisible by it}}
func.func private @indivisible_dim_is_rejected(
    tensor<8xf32>,
    tensor<8x6xf32> {piper.placement = #piper.placement<@m, [{}, {tp}]>})

// -----

// ... and over the product of several axes.
piper.mesh @m axes = [dp = 2, tp = 4]
// expected-error@+1 {{argument #0 placement: axes 'dp', 'tp' of @m have a combined size of 8; dim 0 (size 12) is not divisible by it}}
func.func private @indivisible_by_axis_product_is_rejected(
    tensor<12xf32> {piper.placement = #piper.placement<@m, [{dp, tp}]>})

// -----

// One entry per tensor dimension.
piper.mesh @m axes = [dp = 2]
// expected-error@+1 {{argument #0 placement: placement lists 1 dims but 'tensor<8x8xf32>' has rank 2}}
func.func private @rank_mismatch_is_rejected(
    tensor<8x8xf32> {piper.placement = #piper.placement<@m, [{dp}]>})

// -----

// Placements describe ranked tensors.
piper.mesh @m axes = [dp = 2]
// expected-error@+1 {{argument #0 placement: a placement needs a ranked tensor, got 'f32'}}
func.func private @scalar_is_rejected(
    f32 {piper.placement = #piper.placement<@m, []>})

// -----

// ZeRO has stages 0 to 3.
piper.mesh @m axes = [dp = 2]
// expected-error@+2 {{ZeRO stage must be 0, 1, 2 or 3, got 4}}
func.func private @zero_stage_out_of_range_is_rejected(
    tensor<8xf32> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@m, [{}], replicated = {dp}, zero = 4>>})

// -----

// ZeRO shards over the replicated axes, so it needs some.
piper.mesh @m axes = [dp = 2]
// expected-error@+2 {{ZeRO stage 2 shards over the replicated axes, but the placement lists none}}
func.func private @zero_without_replicated_axes_is_rejected(
    tensor<8xf32> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@m, [{}], zero = 2>>})

// -----

// ZeRO describes parameters, not plain values.
piper.mesh @m axes = [dp = 2]
// expected-error@+1 {{argument #0 placement: ZeRO stage 1 describes parameters; put the placement inside #piper.param}}
func.func private @zero_on_activation_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@m, [{}], replicated = {dp}, zero = 1>})

// -----

// A placement field may be given once.
piper.mesh @m axes = [dp = 2]
// expected-error@+2 {{placement field 'replicated' given twice}}
func.func private @placement_field_twice_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@m, [{}], replicated = {dp}, replicated = {dp}>})

// -----

// Placement fields are replicated and zero.
piper.mesh @m axes = [dp = 2]
// expected-error@+2 {{unknown placement field 'stage'; expected replicated or zero}}
func.func private @unknown_placement_field_is_rejected(
    tensor<8xf32> {piper.placement = #piper.placement<@m, [{}], stage = 1>})

// -----

// piper.placement must hold a placement.
// expected-error@+1 {{'piper.placement' on argument #0 must be a #piper.placement, got "dp"}}
func.func private @placement_of_wrong_kind_is_rejected(
    tensor<8xf32> {piper.placement = "dp"})

// -----

// Results take the same checks.
// expected-error@+1 {{'piper.placement' on result #0 must be a #piper.placement, got 3 : i64}}
func.func private @result_placement_of_wrong_kind_is_rejected() -> (tensor<8xf32> {piper.placement = 3})

// -----

// Unknown piper.* attributes on results are typos too.
// expected-error@+1 {{unknown piper result attribute 'piper.placment'}}
func.func private @misspelled_result_attribute_is_rejected() -> (tensor<8xf32> {piper.placment = 1})

// -----

// Unknown piper.* attributes on arguments are typos, not extensions.
// expected-error@+1 {{unknown piper argument attribute 'piper.placment'}}
func.func private @misspelled_attribute_is_rejected(
    tensor<8xf32> {piper.placment = 1})

// -----

// Tag names are upper-case identifiers.
func.func @lower_case_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op malformed tag name 'pp': tag names are upper-case identifiers such as PP or EP}}
  piper.annotate {pp = 0} {
    piper.yield
  }
  return
}

// -----

// Tag names cannot start with a digit or hold punctuation.
func.func @punctuated_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op malformed tag name 'P-P': tag names are upper-case identifiers such as PP or EP}}
  piper.annotate {"P-P" = 0} {
    piper.yield
  }
  return
}

// -----

// MB is assigned by split, not by the user.
func.func @reserved_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op tag 'MB' is reserved: split assigns microbatch numbers}}
  piper.annotate {MB = 0} {
    piper.yield
  }
  return
}

// -----

// PASS is assigned by the DAG builder.
func.func @reserved_pass_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op tag 'PASS' is reserved: the DAG builder assigns passes (F, B, BI, BW, UPD)}}
  piper.annotate {PASS = "F"} {
    piper.yield
  }
  return
}

// -----

// Tag values are non-negative.
func.func @negative_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op tag 'PP' must be non-negative, got -1}}
  piper.annotate {PP = -1} {
    piper.yield
  }
  return
}

// -----

// Tag values are integers or strings.
func.func @float_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op tag 'PP' must be a non-negative integer or a string, got 1.500000e+00 : f64}}
  piper.annotate {PP = 1.5} {
    piper.yield
  }
  return
}

// -----

// Booleans are not tag values.
func.func @boolean_tag_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op tag 'PP' must be a non-negative integer or a string, got true}}
  piper.annotate {PP = true} {
    piper.yield
  }
  return
}

// -----

// "*" is the filters' wildcard, not a tag value.
func.func @wildcard_tag_value_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op tag 'KIND' has the value "*", which filters use as a wildcard}}
  piper.annotate {KIND = "*"} {
    piper.yield
  }
  return
}

// -----

// A tag is given once per annotation.
func.func @duplicate_tag_is_rejected() {
  // expected-error@+1 {{duplicate tag 'PP'}}
  piper.annotate {PP = 0, PP = 1} {
    piper.yield
  }
  return
}

// -----

// An annotation needs a tag.
func.func @empty_tags_are_rejected() {
  // expected-error@+1 {{'piper.annotate' op needs at least one tag}}
  piper.annotate {} {
    piper.yield
  }
  return
}

// -----

// Nested annotations add tags; they may not overwrite one.
func.func @nested_duplicate_tag_is_rejected() {
  // expected-note@+1 {{enclosing piper.annotate here}}
  piper.annotate {PP = 0} {
    // expected-error@+1 {{'piper.annotate' op tag 'PP' is already set to 0 by an enclosing piper.annotate}}
    piper.annotate {EP = 0, PP = 1} {
      piper.yield
    }
    piper.yield
  }
  return
}

// -----

// The yielded types are the results' types.
func.func @yield_type_mismatch_is_rejected(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.annotate' op yields (tensor<4xf32>) but its results are (tensor<8xf32>)}}
  %r = piper.annotate {PP = 0} -> tensor<8xf32> {
    piper.yield %x : tensor<4xf32>
  }
  return
}

// -----

// The region must end in piper.yield.
func.func @missing_yield_is_rejected() {
  // expected-error@+1 {{'piper.annotate' op region must end in piper.yield}}
  "piper.annotate"() <{tags = {PP = 0 : i64}}> ({
    "func.return"() : () -> ()
  }) : () -> ()
  return
}

// -----

// piper.yield belongs to piper.annotate.
func.func @yield_outside_annotate_is_rejected() {
  // expected-error@+1 {{'piper.yield' op expects parent op 'piper.annotate'}}
  piper.yield
}

// -----

// A chunk nested in a backward chunk is a backward chunk of the same pass.
func.func @nested_pass_mismatch_is_rejected() {
  piper.annotate {PP = 0} pass = BI {
    // expected-error@+1 {{'piper.annotate' op is a BW chunk inside a BI chunk; nested chunks share their pass}}
    piper.annotate {EP = 0} pass = BW {
      piper.yield
    }
    piper.yield
  }
  return
}

// -----

// A forward chunk may not sit inside a backward one.
func.func @forward_in_backward_is_rejected() {
  piper.annotate {PP = 0} pass = BW {
    // expected-error@+1 {{'piper.annotate' op is a forward chunk inside a BW chunk; nested chunks share their pass}}
    piper.annotate {EP = 0} {
      piper.yield
    }
    piper.yield
  }
  return
}

// -----

// Passes are F, B, BI, BW and UPD.
func.func @unknown_pass_is_rejected() {
  // expected-error@+2 {{expected ::mlir::piper::PassKind to be one of: F, B, BI, BW, UPD}}
  // expected-error@+1 {{failed to parse Piper_PassKindAttr parameter 'value' which is to be a `::mlir::piper::PassKind`}}
  piper.annotate {PP = 0} pass = BX {
    piper.yield
  }
  return
}

// -----

// piper.vjp names a piper op.
func.func @vjp_of_unknown_op_is_rejected(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op 'math.exp' is not a registered piper operation}}
  %d = piper.vjp "math.exp" wrt [0] (%x) cotangents (%x) : (tensor<4xf32>), (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// wrt indices are in range.
func.func @vjp_wrt_out_of_range_is_rejected(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op wrt index 1 is out of range for 1 primals}}
  %d = piper.vjp "piper.relu" wrt [1] (%x) cotangents (%x) : (tensor<4xf32>), (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// wrt indices increase strictly.
func.func @vjp_wrt_not_increasing_is_rejected(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op wrt indices must be strictly increasing}}
  %a, %b = piper.vjp "piper.add" wrt [1, 0] (%x, %x) cotangents (%x) : (tensor<4xf32>, tensor<4xf32>), (tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// wrt is not empty.
func.func @vjp_without_wrt_is_rejected(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op needs at least one operand in 'wrt'}}
  "piper.vjp"(%x, %x) <{op = "piper.relu", wrt = array<i64>, operandSegmentSizes = array<i32: 1, 1>}> : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// One gradient per wrt operand.
func.func @vjp_result_count_is_checked(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op has 2 results for 1 wrt operands}}
  %a, %b = piper.vjp "piper.relu" wrt [0] (%x) cotangents (%x) : (tensor<4xf32>), (tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// A gradient has its primal's type.
func.func @vjp_gradient_type_is_checked(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op gradient of primal 0 has type 'tensor<4xf64>', expected 'tensor<4xf32>'}}
  %d = piper.vjp "piper.relu" wrt [0] (%x) cotangents (%x) : (tensor<4xf32>), (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

// A VJP needs a cotangent.
func.func @vjp_without_cotangent_is_rejected(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.vjp' op needs at least one cotangent}}
  %d = "piper.vjp"(%x) <{op = "piper.relu", wrt = array<i64: 0>, operandSegmentSizes = array<i32: 1, 0>}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// piper.grad names a parameter of the function.
// expected-error@+1 {{result #0 is the gradient of 'v', which is not a parameter of the function}}
func.func private @grad_of_unknown_param_is_rejected(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> (tensor<4xf32> {piper.grad = "v"})

// -----

// A gradient has its parameter's type.
// expected-error@+1 {{result #0 is the gradient of parameter 'w' of type 'tensor<4xf32>' but has type 'tensor<8xf32>'}}
func.func private @grad_type_is_checked(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> (tensor<8xf32> {piper.grad = "w"})

// -----

// piper.grad holds a name.
// expected-error@+1 {{'piper.grad' on result #0 must name a parameter, got 1 : i64}}
func.func private @grad_of_wrong_kind_is_rejected(tensor<4xf32> {piper.param = #piper.param<"w", zeros>}) -> (tensor<4xf32> {piper.grad = 1})
