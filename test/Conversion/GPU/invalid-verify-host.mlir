// --piper-gpu-verify-host: host code of a GPU plan must not touch device
// memory nor call the CPU kernel library.
// RUN: piper-opt %s --split-input-file --verify-diagnostics --piper-gpu-verify-host

func.func @host_load_is_rejected(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{reads device memory on the host; the GPU target maps only linalg ops to kernels}}
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func @kernel_library_call_is_rejected(%x: memref<*xf32>, %w: memref<*xf32>, %dy: memref<*xf32>, %db: memref<*xf32>) {
  // expected-error@+1 {{calls the CPU kernel library (@piper_k_vjp_linear_2_f32), which the GPU target cannot run}}
  call @piper_k_vjp_linear_2_f32(%x, %w, %dy, %db) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}
func.func private @piper_k_vjp_linear_2_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>)

// -----

// The CPU plan's clipping calls read the gradient on the host.
func.func @host_clip_call_is_rejected(%g: memref<*xf32>, %w: f64) {
  // expected-error@+1 {{calls @piper_clip_accumulate_f32, which reads device memory on the host (--piper-gpu-clip rewrites it)}}
  call @piper_clip_accumulate_f32(%g, %w) : (memref<*xf32>, f64) -> ()
  return
}
func.func private @piper_clip_accumulate_f32(memref<*xf32>, f64)

// -----

// A scalar on the host stack is the host's own memory; a kernel launch
// reads device memory inside the kernel.
func.func @stack_and_kernels_are_fine(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.alloca() : memref<f32>
  %v = memref.load %s[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %w = %c1, %q = %c1) {
    %e = memref.load %a[%c0] : memref<4xf32>
    memref.store %e, %a[%c0] : memref<4xf32>
    gpu.terminator
  }
  return %v : f32
}
