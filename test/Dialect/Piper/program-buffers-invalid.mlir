// RUN: piper-opt %s -split-input-file -verify-diagnostics
// The buffer table of a piper.program and the buffers its instructions
// name: what one program can check alone (overlapping lifetimes are
// --piper-verify-programs', test/Transforms/assign-buffers-invalid.mlir).

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// A buffer of negative size.
// expected-error@+1 {{'piper.program' op buffer 1 has -4 bytes; buffer sizes must be non-negative}}
piper.program @negative_size_is_rejected role {} of @mesh step @step streams ["compute"] buffers [16, -4] {
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// More persistent buffers than buffers.
// expected-error@+1 {{'piper.program' op declares 3 persistent buffers, but has 2 buffers}}
piper.program @too_many_persistent_is_rejected role {} of @mesh step @step streams ["compute"] buffers [16, 16] persistent 3 {
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Persistent buffers without a table.
// expected-error@+1 {{'piper.program' op declares persistent buffers without a buffer table (`buffers [...]`)}}
piper.program @persistent_without_table_is_rejected role {} of @mesh step @step streams ["compute"] persistent 1 {
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// An instruction names a buffer, but the program has no table.
piper.program @buffers_without_table_is_rejected role {} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op names buffers, but its program has no buffer table (`buffers [...]`)}}
  %x = piper.input 0 buffers [0] : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// With a table, every value needs a buffer.
piper.program @missing_buffers_is_rejected role {} of @mesh step @step streams ["compute"] buffers [16] {
  // expected-error@+1 {{'piper.input' op names no buffers, but its program has a buffer table; every result needs one}}
  %x = piper.input 0 : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}
func.func private @f(tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)

// One buffer per result.
piper.program @buffer_count_is_checked role {} of @mesh step @step streams ["compute"] buffers [16, 16, 16] {
  %x = piper.input 0 buffers [0] : tensor<4xf32>
  // expected-error@+1 {{'piper.launch' op names 1 buffers for 2 results}}
  %a, %b = piper.launch "F" @f(%x) on "compute" buffers [1] : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// A buffer index outside the table.
piper.program @buffer_out_of_range_is_rejected role {} of @mesh step @step streams ["compute"] buffers [16] {
  // expected-error@+1 {{'piper.input' op names buffer 1, but the program has 1 buffers}}
  %x = piper.input 0 buffers [1] : tensor<4xf32>
}
