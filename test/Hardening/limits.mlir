// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// Sizes a user can type into IR are bounded (include/piper/Limits.h,
// docs/Limits.md) and checked by the verifiers, before a transform or a
// pass does any work with them.

// A mesh axis of 2^32 devices (once accepted, and multiplied into an
// overflowing device count).
// expected-error@+1 {{mesh axis 'a' has size 4294967296; sizes must be <= 1048576}}
piper.mesh @m axes = [a = 4294967296, b = 4294967296]

// -----

// Each axis fits, their product does not (it overflowed int64 before:
// --piper-print-summary printed "mesh @m: -2 devices").
// expected-error@+1 {{'piper.mesh' op mesh @m has more than 1048576 devices (the product of its axis sizes)}}
piper.mesh @m axes = [a = 1048576, b = 2]

// -----

// A hand-written placement on a coordinate the mesh does not have.
piper.mesh @mesh axes = [pp = 2]
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op axis 'pp' of @mesh has size 2; coordinate 4294967296 is out of range}}
    %a = piper.task "F{PP=0}" @id(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 4294967296}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An axis the mesh does not have.
piper.mesh @mesh axes = [pp = 2]
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op 'devices' names axis 'tp', which mesh @mesh does not have (axes: pp)}}
    %a = piper.task "F{PP=0}" @id(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {tp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A negative coordinate.
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op coordinate of axis 'pp' in 'devices' must be a non-negative integer}}
    %a = piper.task "F{PP=0}" @id(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = -1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// 2^32 microbatches ran for minutes and grew to gigabytes before.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{'transform.piper.split' op makes at most 256 microbatches, got 4294967296}}
    %s = transform.piper.split %n into 4294967296 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
