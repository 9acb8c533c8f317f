// RUN: piper-opt %s -split-input-file --piper-number-communicators -verify-diagnostics
// What --piper-number-communicators rejects, with exact diagnostics.

// An all_to_all between programs: only the expert all-to-alls inside
// launched bodies are lowered.
piper.mesh @mesh axes = [ep = 2]
func.func @a2a(%x: tensor<4xf32>) {
  return
}
piper.program @a2a.all role {} of @mesh step @a2a streams ["ep"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{cannot lower 'x': all_to_all between programs is not lowered (only data-parallel gradient and ZeRO collectives are)}}
  %y = piper.comm "x" all_to_all %x over ["ep"] on "ep" : tensor<4xf32>
}

// -----

// Two meshes: communicator keys and ranks need one.
// expected-error@+1 {{needs exactly one piper.mesh to lower device programs, found 2}}
module {
  piper.mesh @mesh axes = [dp = 2]
  piper.mesh @other axes = [dp = 4]
  func.func @two_meshes(%x: tensor<4xf32>) {
    return
  }
  piper.program @two_meshes.all role {} of @mesh step @two_meshes streams ["compute"] {
    %x = piper.input 0 : tensor<4xf32>
  }
}

// -----

// No mesh at all.
// expected-error@+1 {{needs exactly one piper.mesh to lower device programs, found 0}}
module {
  func.func @no_mesh(%x: tensor<4xf32>) {
    return
  }
}
