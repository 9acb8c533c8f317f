// The tiny GPT compiled with --clip-grad-norm and --target=cuda: the plan
// clips on the device (--piper-gpu-clip). Its object calls the ABI's
// device-side clipping functions and none of the host-reading ones, and
// every kernel (the sums of squares and scales included) is an sm_90 cubin
// whose PTX ptxas accepts. The CPU plan of the same model still calls the
// host-reading ones. piper-run-cuda defines every plan-ABI and mgpu
// function the GPU plan's object needs.
// REQUIRES: ptxas, piper-run-cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --target=cuda --clip-grad-norm=0.05 -o %t/gpu.plan
// RUN: llvm-nm -u %t/gpu.plan/step.all.so | FileCheck %s --check-prefix=GPU
// RUN: python3 %piper_src_root/test/utils/check-cubins.py %t/gpu.plan sm_90 | FileCheck %s --check-prefix=CUBINS
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/gpu.plan/plan.json
// RUN: llvm-nm -u --just-symbol-name %t/gpu.plan/step.all.so > %t/needed
// RUN: llvm-nm -D --defined-only --just-symbol-name piper-run-cuda > %t/provided
// RUN: python3 -c "import sys; n = {l.strip() for l in open(sys.argv[1]) if l.startswith(('piper_', 'mgpu'))}; p = {l.strip() for l in open(sys.argv[2])}; print(len(n), 'needed, missing:', ' '.join(sorted(n - p)) or 'none')" %t/needed %t/provided | FileCheck %s --check-prefix=PROVIDED
// RUN: piper-compile %t/gpt.mlir --clip-grad-norm=0.05 -o %t/cpu.plan
// RUN: llvm-nm -u %t/cpu.plan/step.all.so | FileCheck %s --check-prefix=CPU

// GPU-NOT: piper_clip_accumulate_
// GPU-NOT: piper_clip_scale_
// GPU: piper_clip_add_squares
// GPU: piper_clip_coefficient
// GPU: piper_clip_finish
// GPU-NOT: piper_clip_accumulate_
// GPU-NOT: piper_clip_scale_

// CUBINS: all 1 roles: [[N:[0-9]+]] cubins for sm_90, [[N]] PTX accepted by ptxas, [[N]] kernels

// PLAN: "clip_grad_norm": 0.05

// PROVIDED: {{[1-9][0-9]*}} needed, missing: none

// CPU: piper_clip_accumulate_f32
// CPU: piper_clip_finish
// CPU: piper_clip_scale_f32
