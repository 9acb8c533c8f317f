// Bad --target and --gpu-arch values: one line each, non-zero exit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --mesh=dp=1 -o %t/mlp.mlir
// RUN: not piper-compile %t/mlp.mlir --target=rocm -o %t/p 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not piper-compile %t/mlp.mlir --target=cuda --gpu-arch=sm_20 -o %t/p 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not piper-compile %t/mlp.mlir --target=cuda --gpu-arch=gfx90a -o %t/p 2>&1 | FileCheck %s --check-prefix=GFX
// RUN: not piper-compile %t/mlp.mlir --gpu-arch=sm_90 -o %t/p 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not piper-opt %t/mlp.mlir --piper-lower-to-gpu=chip=sm_9x 2>&1 | FileCheck %s --check-prefix=PASS

// TARGET: piper-compile: unknown --target 'rocm' (cpu or cuda)
// ARCH: piper-compile: unknown GPU architecture 'sm_20' (expected sm_<NN> or sm_<NN>a with NN >= 70, e.g. sm_90)
// GFX: piper-compile: unknown GPU architecture 'gfx90a' (expected sm_<NN> or sm_<NN>a with NN >= 70, e.g. sm_90)
// NOTARGET: piper-compile: --gpu-arch needs --target=cuda
// PASS: error: unknown GPU architecture 'sm_9x' (expected sm_<NN> or sm_<NN>a with NN >= 70, e.g. sm_90)
