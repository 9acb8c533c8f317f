// A constant buffer in host memory cannot feed a GPU kernel.
// RUN: piper-opt %s --split-input-file --verify-diagnostics --piper-gpu-device-memory

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @host_constant_is_rejected(%out: memref<4xf32>) {
  // expected-error@+1 {{the GPU target cannot read host constant @table}}
  %t = memref.get_global @table : memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  return
}
