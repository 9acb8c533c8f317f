// piper-run-cuda (the driver over the CUDA + NCCL backend,
// docs/GPU-runtime.md) starts where there is no GPU and no libcuda.so.1,
// and says so in one line with exit code 1, before MPI or any plan object
// is loaded. With the CUDA 13 driver stub it resolves every versioned driver
// entry point (else "is too old") and reports the stub's failing cuInit.
// REQUIRES: piper-run-cuda, ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f32 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir --target=cuda -o %t/mlp.plan
// RUN: env -u PIPER_RT_CUDA_DRIVER not piper-run-cuda %t/mlp.plan --steps=1 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: piper-run: piper-rt: unavailable: no CUDA device: libcuda.so.1 cannot be loaded (libcuda.so.1: cannot open shared object file: No such file or directory) (at {{.*}})
// NONE-NOT: {{.}}
// RUN: test ! -e /usr/local/cuda/lib/stubs/libcuda.so || env PIPER_RT_CUDA_DRIVER=/usr/local/cuda/lib/stubs/libcuda.so not piper-run-cuda %t/mlp.plan --steps=1 2>&1 | FileCheck %s --check-prefix=STUB
// STUB: piper-run: piper-rt: unavailable: no CUDA device: cuInit failed: CUDA error 34 (at {{.*}})
// STUB-NOT: {{.}}
