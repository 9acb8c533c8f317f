// piper-compile --precision=bf16-mixed: the front half (autodiff, optimizer,
// DAG, strategy, partition, program verification) and the native lowering
// take the rewritten model; the plan's step arguments stay f32 (the master
// weights and the data), so piper-run feeds it as the f32 plan.
// Numerics: test/Integration/train-bf16-mixed*.mlir.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --precision=bf16-mixed --emit=programs -o %t/programs.mlir
// RUN: FileCheck %s --check-prefix=PROGRAMS --input-file=%t/programs.mlir
// RUN: piper-compile %t/gpt.mlir --precision=bf16-mixed -o %t/plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/plan/plan.json
// RUN: not piper-compile %t/gpt.mlir --precision=fp8 -o %t/plan 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not piper-compile %t/gpt.mlir --precision=bf16-mixed --grad-reduce-dtype=bf16 -o %t/plan 2>&1 | FileCheck %s --check-prefix=GRED
// The tensor-parallel shard directive finds the parameters behind their
// bf16 copies (forward and weight-gradient nodes alike).
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}]}' > %t/tp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=tp=2 --batch=2 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --precision=bf16-mixed --directives=%t/tp.json --emit=programs | FileCheck %s --check-prefix=TP
// TP: placement = #piper.placement<@mesh, [{}, {tp}]
// TP: piper.collective "all_reduce(layers.0.attn.wo)"
// RUN: piper-compile %t/gpt.mlir --precision=f32 --emit=programs | FileCheck %s --check-prefix=F32 --implicit-check-not=piper.cast

// PROGRAMS: piper.cast %{{.*}} : tensor<32x16xf32> -> tensor<32x16xbf16>
// PROGRAMS: piper.adamw_update {{.*}} : tensor<32x16xf32>

// PLAN-NOT: "bf16"
// PLAN: "dtype": "f32"

// BAD: piper-compile: unknown precision 'fp8'; expected f32 or bf16-mixed
// GRED: piper-compile: grad-reduce-dtype 'bf16' is not supported yet: a parameter's gradient is cast to f32 inside its backward task, before any reduction; use f32

// F32: piper.program
