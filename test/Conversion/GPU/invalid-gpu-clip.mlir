// --piper-gpu-clip rejects clipping calls it cannot rewrite, in one line at
// the call.
// RUN: piper-opt %s --piper-gpu-clip -split-input-file -verify-diagnostics

func.func private @piper_clip_accumulate_f32(memref<*xf32>, f64)
func.func @unranked(%u: memref<*xf32>, %w: f64) {
  // expected-error@+1 {{@piper_clip_accumulate_f32 needs an f32 or f64 buffer as operand #0}}
  call @piper_clip_accumulate_f32(%u, %w) : (memref<*xf32>, f64) -> ()
  return
}

// -----

func.func private @piper_clip_accumulate_bf16(memref<*xbf16>, f64)
func.func @bf16(%g: memref<4xbf16>, %w: f64) {
  %u = memref.cast %g : memref<4xbf16> to memref<*xbf16>
  // expected-error@+1 {{@piper_clip_accumulate_bf16 needs an f32 or f64 buffer as operand #0}}
  call @piper_clip_accumulate_bf16(%u, %w) : (memref<*xbf16>, f64) -> ()
  return
}

// -----

func.func private @piper_clip_scale_f32(memref<*xf32>, memref<*xf32>)
func.func @mismatch(%g: memref<4xf32>, %o: memref<8xf32>) {
  %u = memref.cast %g : memref<4xf32> to memref<*xf32>
  %v = memref.cast %o : memref<8xf32> to memref<*xf32>
  // expected-error@+1 {{@piper_clip_scale_f32 needs a result buffer of its input's type}}
  call @piper_clip_scale_f32(%u, %v) : (memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

func.func private @piper_clip_accumulate_f32(memref<*xf32>, f32)
func.func @weight(%g: memref<4xf32>, %w: f32) {
  %u = memref.cast %g : memref<4xf32> to memref<*xf32>
  // expected-error@+1 {{@piper_clip_accumulate_f32 takes a gradient and an f64 weight}}
  call @piper_clip_accumulate_f32(%u, %w) : (memref<*xf32>, f32) -> ()
  return
}
