// A plan's data does not grow with the model's widths: the same GPT (2
// layers, 2 microbatches, PP2 x DP2, ZeRO-1) compiled at hidden 16 and at
// hidden 512 (FFN and vocabulary 32 and 1024) has, role by role, the same
// initialised and zero data in its shared object up to a constant-pool
// difference that does not scale (the wide one has less). Before
// --piper-fold-splat-constants, every accumulated gradient's 1/n scale was a
// dense array of the gradient's shape: 5 MB of .rodata per role at hidden
// 512. The lowered IR holds no array global at all.
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"schedule": {"name": "1f1b"}}]}' > %t/ppdp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --pp=2 --mesh=pp=2,dp=2 --batch=4 --hidden=16 --ffn=32 --vocab=32 -o %t/narrow.mlir
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --pp=2 --mesh=pp=2,dp=2 --batch=4 --hidden=512 --ffn=1024 --vocab=1024 -o %t/wide.mlir
// RUN: piper-compile %t/narrow.mlir --directives=%t/ppdp.json -o %t/narrow.plan
// RUN: piper-compile %t/wide.mlir --directives=%t/ppdp.json -o %t/wide.plan
// RUN: size -A %t/narrow.plan/step.pp0.so > %t/narrow.pp0.size
// RUN: size -A %t/wide.plan/step.pp0.so > %t/wide.pp0.size
// RUN: size -A %t/narrow.plan/step.pp1.so > %t/narrow.pp1.size
// RUN: size -A %t/wide.plan/step.pp1.so > %t/wide.pp1.size
// RUN: awk -f %S/Inputs/data-growth.awk %t/narrow.pp0.size %t/wide.pp0.size | FileCheck %s
// RUN: awk -f %S/Inputs/data-growth.awk %t/narrow.pp1.size %t/wide.pp1.size | FileCheck %s
// RUN: piper-compile %t/wide.mlir --directives=%t/ppdp.json --emit=lowered | FileCheck %s --check-prefix=GLOBALS

// CHECK: data of the wide plan: {{[0-9]+}} bytes; growth within 4096 bytes

// GLOBALS-NOT: llvm.mlir.global {{.*}}!llvm.array
// GLOBALS:     llvm.func @piper_entry_step.pp0
// GLOBALS-NOT: llvm.mlir.global {{.*}}!llvm.array
// GLOBALS:     llvm.func @piper_entry_step.pp1
// GLOBALS-NOT: llvm.mlir.global {{.*}}!llvm.array
