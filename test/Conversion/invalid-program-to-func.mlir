// What --piper-program-to-func rejects, with exact diagnostics (the cases
// piper-compile cannot produce are in invalid.mlir).
// RUN: piper-opt %s -split-input-file --piper-program-to-func -verify-diagnostics

// A module without programs: partitioning has not run.
// expected-error@+1 {{no piper.program to lower; run --piper-partition first}}
module @no_program_is_rejected {
  piper.mesh @mesh axes = [dp = 1]
}

// -----

// piper-compile numbers the communicators; a bare piper.comm has no index.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @comm_without_index_is_rejected role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<2xf64>
  // expected-error@+1 {{cannot lower 'ar': no communicator index (piper-compile numbers them)}}
  %y = piper.comm "ar"all_reduce %x over ["dp"] on "dp" : tensor<2xf64>
  piper.output 0 %y : tensor<2xf64>
}

// -----

// Token exchanges between programs are not lowered.
piper.mesh @mesh axes = [ep = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @all_to_all_is_rejected role {} of @mesh step @step streams ["ep"] {
  %x = piper.input 0 : tensor<2xf64>
  // expected-error@+1 {{cannot lower 'x': all_to_all between programs}}
  %y = piper.comm "x"all_to_all %x over ["ep"] on "ep" {piper_plan.comm = 0 : i64} : tensor<2xf64>
  piper.output 0 %y : tensor<2xf64>
}

// -----

// A reduce-scatter yields a chunk; reducing the chunk again is not a ZeRO
// pattern.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
piper.program @reduce_of_a_shard_is_rejected role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<4xf64>
  %y = piper.comm "rs"reduce_scatter %x over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<4xf64>
  // expected-error@+1 {{cannot lower 'ar': its operand is already a ZeRO shard}}
  %z = piper.comm "ar"all_reduce %y over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<4xf64>
  piper.output 0 %z : tensor<4xf64>
}

// -----

// A step result the program leaves as a chunk, where each device holds the
// whole tensor.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
piper.program @chunk_as_whole_result_is_rejected role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<4xf64>
  %y = piper.comm "rs"reduce_scatter %x over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<4xf64>
  // expected-error@+1 {{step result 0 is held as 'tensor<4xf64>' by each device, but the program computes 'tensor<2xf64>' (a ZeRO stage that its collectives do not implement)}}
  piper.output 0 %y : tensor<4xf64>
}

// -----

// A chunk gathered over other axes than it was scattered over.
piper.mesh @mesh axes = [dp = 2, tp = 2]
func.func @step(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
piper.program @gather_over_another_group_is_rejected role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<4xf64>
  %y = piper.comm "rs"reduce_scatter %x over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<4xf64>
  // expected-error@+1 {{cannot lower 'ag': its operand is a shard over another group}}
  %z = piper.comm "ag"all_gather %y over ["tp"] on "dp" {piper_plan.comm = 1 : i64} : tensor<4xf64>
  piper.output 0 %z : tensor<4xf64>
}

// -----

// ZeRO chunks stay within their role.
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
piper.program @send_of_a_shard_is_rejected role {pp = 0} of @mesh step @step streams ["dp", "pp"] {
  %x = piper.input 0 : tensor<4xf64>
  %y = piper.comm "rs"reduce_scatter %x over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<4xf64>
  // expected-error@+1 {{cannot send a ZeRO shard between roles}}
  piper.send "y" %y to @peer tag 0 on "pp" : tensor<4xf64>
}
piper.program @peer role {pp = 1} of @mesh step @step streams ["pp"] {
  %y = piper.recv "y" from @send_of_a_shard_is_rejected tag 0 on "pp" : tensor<4xf64>
  piper.output 0 %y : tensor<4xf64>
}

// -----

// The peer's role names an axis this program's role does not: no rank offset.
piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
piper.program @peer_on_unknown_axis_is_rejected role {} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf64>
  // expected-error@+1 {{cannot lower 'piper.send': the peer's role names 'pp' but this program's role does not}}
  piper.send "x" %x to @peer tag 0 on "pp" : tensor<4xf64>
}
piper.program @peer role {pp = 1} of @mesh step @step streams ["pp"] {
  %y = piper.recv "x" from @peer_on_unknown_axis_is_rejected tag 0 on "pp" : tensor<4xf64>
  piper.output 0 %y : tensor<4xf64>
}

// -----

// The update body's parameter is whole (ZeRO-1) and the gradient a chunk:
// the parameter is cut to the chunk through the group's communicator, which
// the module does not list.
module attributes {piper_plan.batch_axes = ["dp"]} {
piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}, zero = 1>>},
                %m: tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">})
    -> (tensor<3xf64> {piper.updated = "w"}, tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">}) {
  return %w, %m : tensor<3xf64>, tensor<3xf64>
}
func.func private @upd(%w: tensor<3xf64>, %g: tensor<3xf64>, %m: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<3xf64>
  return %p, %b : tensor<3xf64>, tensor<3xf64>
}
piper.program @missing_zero_communicator_is_rejected role {} of @mesh step @step streams ["compute", "dp"] {
  %w = piper.input 0 : tensor<3xf64>
  %m = piper.input 1 : tensor<3xf64>
  %r = piper.comm "rs"reduce_scatter %w over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<3xf64>
  // expected-error@+1 {{no communicator over the ZeRO group of an operand of 'UPD'}}
  %u:2 = piper.launch "UPD" @upd(%w, %r, %m) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  %a = piper.comm "ag"all_gather %u#0 over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<3xf64>
  piper.output 0 %a : tensor<3xf64>
  piper.output 1 %u#1 : tensor<3xf64>
}
}

// -----

// A ZeRO-3 parameter is held as a flat chunk: it has no microbatches.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<4x2xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 3>>}) -> tensor<4x2xf64> {
  return %w : tensor<4x2xf64>
}
piper.program @microbatch_of_shard_is_rejected role {} of @mesh step @step streams ["compute", "dp"] {
  // expected-error@+1 {{a microbatch of a sharded argument}}
  %w = piper.input 0 microbatch 0 of 2 along 0 : tensor<2x2xf64>
  %r = piper.comm "ar"all_reduce %w over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<2x2xf64>
}
