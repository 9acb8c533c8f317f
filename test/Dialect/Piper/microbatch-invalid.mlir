// RUN: piper-opt %s -split-input-file -verify-diagnostics
// The microbatch nodes check their slices and sums.

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op index 2 is outside [0, 2)}}
    %m = piper.microbatch "x[MB=2]" %x[2 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op needs a count of at least 1, got 0}}
    %m = piper.microbatch "x[MB=0]" %x[0 of 0] : tensor<4x8xf64> -> tensor<2x8xf64>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op dimension 2 is outside the rank-2 value}}
    %m = piper.microbatch "x[MB=0]" %x[0 of 2] along 2 : tensor<4x8xf64> -> tensor<2x8xf64>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op dimension 0 of 'tensor<4x8xf64>' (size 4) does not divide into 3 microbatches}}
    %m = piper.microbatch "x[MB=0]" %x[0 of 3] : tensor<4x8xf64> -> tensor<2x8xf64>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op result 'tensor<4x4xf64>' must be 'tensor<4x8xf64>' with dimension 0 divided by 2}}
    %m = piper.microbatch "x[MB=0]" %x[0 of 2] : tensor<4x8xf64> -> tensor<4x4xf64>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op result 'tensor<2x8xf32>' must have the element type and rank of 'tensor<4x8xf64>'}}
    %m = piper.microbatch "x[MB=0]" %x[0 of 2] : tensor<4x8xf64> -> tensor<2x8xf32>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}

// -----

func.func @f(%a: tensor<4xf64>, %b: tensor<4xf32>) -> tensor<4xf64> {
  %r = piper.dag -> tensor<4xf64> {
    // expected-error@+1 {{'piper.accumulate' op value #1 has type 'tensor<4xf32>', not the result type 'tensor<4xf64>'}}
    %s = piper.accumulate "acc" %a, %b scale 1.0 : (tensor<4xf64>, tensor<4xf32>) -> tensor<4xf64>
    piper.dag_yield %s : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}

// -----

func.func @f(%a: tensor<4xf64>) -> tensor<4xf64> {
  %r = piper.dag -> tensor<4xf64> {
    // expected-error@+1 {{'piper.accumulate' op needs at least one value}}
    %s = piper.accumulate "acc" scale 1.0 : () -> tensor<4xf64>
    piper.dag_yield %s : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<2x8xf64> {
  // expected-error@+1 {{'piper.microbatch' op expects parent op 'piper.dag'}}
  %m = piper.microbatch "x[MB=0]" %x[0 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
  return %m : tensor<2x8xf64>
}

// -----

func.func @f(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %r = piper.dag -> tensor<4x8xf64> {
    // expected-error@+1 {{'piper.microbatch' op index -1 is outside [0, 2)}}
    %m = piper.microbatch "x[MB=0]" %x[-1 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
    piper.dag_yield %x : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}
