// f32 plans match the interpreter's f32 mode (f32 storage, one rounding per
// kernel) to 1e-5 over 5 AdamW steps on tiny MLP, GPT and MoE. The plans'
// elementwise ops (relu, swiglu and their VJPs) compute in f32 arithmetic,
// the library kernels in f64 rounded once: the tolerance covers both.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f32 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.plan
// RUN: piper-run %t/mlp.plan --steps=5 > %t/mlp.run.txt
// RUN: piper-interp %t/mlp.mlir --steps=5 --optimizer=adamw --precision=f32 > %t/mlp.interp.txt
// RUN: %numdiff --rel 1e-5 %t/mlp.interp.txt %t/mlp.run.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir -o %t/gpt.plan
// RUN: piper-run %t/gpt.plan --steps=5 > %t/gpt.run.txt
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --precision=f32 > %t/gpt.interp.txt
// RUN: %numdiff --rel 1e-5 %t/gpt.interp.txt %t/gpt.run.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f32 --mesh=dp=1 -o %t/moe.mlir
// RUN: piper-compile %t/moe.mlir -o %t/moe.plan
// RUN: piper-run %t/moe.plan --steps=5 > %t/moe.run.txt
// RUN: piper-interp %t/moe.mlir --steps=5 --optimizer=adamw --precision=f32 > %t/moe.interp.txt
// RUN: %numdiff --rel 1e-5 %t/moe.interp.txt %t/moe.run.txt
// RUN: FileCheck %s --input-file=%t/moe.run.txt
// CHECK: step 5 loss
