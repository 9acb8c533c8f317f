// Compiled bf16-mixed plans (docs/MixedPrecision.md) of the tiny GPT and MoE,
// serial, 20 AdamW steps at lr 1e-3, against the interpreter's bf16-mixed
// mode and the f32 run.
//
// Against the interpreter: losses within 2e-4 relative per step (observed
// 2.6e-5 GPT, 5.8e-5 MoE); the GPT's final parameters within 5e-4
// absolute (observed 6e-5; weights of size 0.02 to 1; AdamW normalises
// each update, so an element whose gradient is near zero moves by up to
// lr = 1e-3 a step on rounding noise alone). The MoE's parameters are not
// compared: its router's top-k is discontinuous, a score one bf16 ulp
// apart can send a token to another expert, and that expert's weights then
// get another gradient (observed 2.5e-3 after 20 steps). Not bitwise: the
// interpreter computes each op exactly in f64 and rounds to f32 and then
// bf16, a compiled kernel sums in f32 in its own order (sgemm blocking,
// vectorised row reductions) and rounds to bf16 once, so an f32 result a
// last bit apart can land on the neighbouring bf16 value (2^-8 relative).
// Against f32: within 1e-3 relative per loss (observed 7.2e-5 GPT, 3.4e-5
// MoE), and not equal to it (1e-6 fails), so bf16 rounding happens.
// RUN: rm -rf %t && mkdir -p %t
// RUN: for m in gpt moe; do piper-gen --model=$m --config=tiny-$m --dtype=f32 --mesh=dp=1 --batch=4 -o %t/$m.mlir || exit 1; done
// RUN: for m in gpt moe; do piper-compile %t/$m.mlir --precision=bf16-mixed -o %t/$m.plan || exit 1; done
// RUN: for m in gpt moe; do piper-run %t/$m.plan --steps=20 --params-out=%t/$m.run.params > %t/$m.run.txt || exit 1; done
// RUN: for m in gpt moe; do piper-interp %t/$m.mlir --steps=20 --optimizer=adamw --precision=bf16-mixed --params-out=%t/$m.interp.params > %t/$m.interp.txt || exit 1; done
// RUN: for m in gpt moe; do piper-interp %t/$m.mlir --steps=20 --optimizer=adamw --precision=f32 > %t/$m.f32.txt || exit 1; done
// RUN: for m in gpt moe; do %numdiff --rel 2e-4 %t/$m.interp.txt %t/$m.run.txt || exit 1; done
// RUN: %numdiff --abs 5e-4 %t/gpt.interp.params %t/gpt.run.params
// RUN: for m in gpt moe; do %numdiff --rel 1e-3 %t/$m.f32.txt %t/$m.run.txt || exit 1; done
// RUN: for m in gpt moe; do not %numdiff --rel 1e-6 %t/$m.f32.txt %t/$m.run.txt || exit 1; done
// RUN: FileCheck %s --input-file=%t/gpt.run.txt
//
// The plan holds bf16 kernels (the casts, bf16 GEMMs accumulating in f32)
// and calls the bf16 GEMM kernels; the f32 plan has none of them.
// RUN: piper-compile %t/gpt.mlir --precision=bf16-mixed --emit=llvm-ir -o %t/gpt.ll
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/gpt.ll
// RUN: piper-compile %t/gpt.mlir --emit=llvm-ir -o %t/gpt32.ll
// RUN: not grep -q bf16 %t/gpt32.ll
// IR-DAG: declare void @piper_k_gemm_bf16(
// IR-DAG: declare void @piper_k_batch_gemm_bf16(
// IR-DAG: declare void @piper_k_vjp_linear_0_bf16(
// IR-DAG: declare void @piper_k_vjp_linear_1_bf16(
//
// Master weights stay f32: one step at lr 1e-5 moves every weight, about
// 75% of them by less than bf16 can resolve at their size (their bf16 copy
// does not change; stored in bf16 the update would be lost), and every
// value is an f32. --steps=0 writes the initial parameters.
// RUN: piper-compile %t/gpt.mlir --precision=bf16-mixed --lr=1e-5 -o %t/gpt.lr.plan
// RUN: piper-run %t/gpt.lr.plan --steps=0 --params-out=%t/before.params
// RUN: piper-run %t/gpt.lr.plan --steps=1 --params-out=%t/after.params
// RUN: python3 %S/Inputs/master-weights.py %t/before.params %t/after.params 0.9 0.5 | FileCheck %s --check-prefix=MASTER
// MASTER: 6224 weights, 6224 moved (1.000), {{[0-9]+}} of them by less than bf16 resolves (0.{{[5-9]}}
// The same step in the interpreter.
// RUN: piper-interp %t/gpt.mlir --steps=1 --optimizer=adamw --lr=1e-5 --precision=bf16-mixed --params-out=%t/interp1.params
// RUN: %numdiff --abs 1e-6 %t/interp1.params %t/after.params

// CHECK: step 1 loss 3.46004
// CHECK: step 20 loss
