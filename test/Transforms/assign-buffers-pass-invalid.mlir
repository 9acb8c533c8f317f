// RUN: piper-opt %s -split-input-file --piper-assign-buffers -verify-diagnostics
// Inputs --piper-assign-buffers rejects.

// A module without device programs: nothing to assign buffers in.
// expected-error@+1 {{no piper.program to assign buffers in; partition the DAG into device programs (--piper-partition) first}}
module @no_programs_is_rejected {
  func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Buffers are assigned once.
// expected-error@+1 {{'piper.program' op already has buffers; assign them once}}
piper.program @assigned_twice_is_rejected role {} of @mesh step @step streams ["compute"] buffers [16] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4xf32>
}
