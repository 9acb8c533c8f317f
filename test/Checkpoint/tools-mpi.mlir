// piper-ckpt and piper-run --init-from: a checkpoint saved every 2 steps
// keeping 2 (--keep) holds steps 4 and 6; inspect names its tensors and
// pieces; verify checks them; consolidate writes whole tensors that an
// independent reader (Inputs/safetensors.py: struct and json) finds equal
// to piper-run --params-out, bit for bit; --init-from starts other plans
// (DP2 ZeRO-3, TP2, and f32 from an f32 file written by Python) from those
// weights exactly.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/dp-z3.json
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json

// GPT under DP2 ZeRO-3, saved every 2 of 6 steps, keeping 2.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=2 --batch=1 -o %t/dp2.mlir
// RUN: piper-compile %t/dp2.mlir --directives=%t/dp-z3.json -o %t/dp2.plan
// RUN: %mpiexec -np 2 piper-run %t/dp2.plan --steps=6 --save=%t/c --save-every=2 --keep=2 --params-out=%t/gpt.params > %t/gpt.txt
// RUN: ls %t/c | FileCheck %s --check-prefix=KEEP
// KEEP-NOT: step-00000002
// KEEP: step-00000004
// KEEP-NEXT: step-00000006
// KEEP-NOT: step

// RUN: piper-ckpt inspect %t/c | FileCheck %s --check-prefix=INSPECT
// INSPECT: checkpoint {{.*}}c/step-00000006
// INSPECT-NEXT: step 6, seed 0, data synthetic
// INSPECT-NEXT: strategy: mesh dp=2, 1 role(s), plan {{.*}}dp2.plan
// INSPECT-NEXT: 84 tensors (21 parameters), 147 pieces in 2 files, {{[0-9]+}} bytes
// INSPECT-NEXT: embed.weight f64 [32, 16]
// INSPECT-NEXT: rank-00000.safetensors flat [0, 256) 2048 bytes at {{[0-9]+}} crc32 0x{{[0-9a-f]+}}
// INSPECT-NEXT: rank-00001.safetensors flat [256, 512) 2048 bytes at {{[0-9]+}} crc32 0x{{[0-9a-f]+}}
// RUN: piper-ckpt verify %t/c | FileCheck %s --check-prefix=VERIFY
// VERIFY: checkpoint {{.*}}c/step-00000006: OK (84 tensors, 147 pieces, {{[0-9]+}} bytes)

// Consolidated parameters equal --params-out's text exactly.
// RUN: piper-ckpt consolidate %t/c -o %t/gpt.safetensors --params-only
// RUN: python3 %S/Inputs/safetensors.py dump %t/gpt.safetensors %t/gpt.params > %t/gpt.dump
// RUN: cmp %t/gpt.params %t/gpt.dump
// RUN: piper-ckpt inspect %t/gpt.safetensors | FileCheck %s --check-prefix=FILE
// FILE: safetensors {{.*}}gpt.safetensors
// FILE-NEXT: 21 tensors (21 parameters), 21 pieces in 1 files
// With optimizer state too.
// RUN: piper-ckpt consolidate %t/c/step-00000004 -o %t/all.safetensors
// RUN: piper-ckpt inspect %t/all.safetensors | FileCheck %s --check-prefix=ALL
// ALL: 84 tensors (21 parameters)

// --init-from under other strategies: zero steps, then --params-out.
// RUN: %mpiexec -np 2 piper-run %t/dp2.plan --steps=0 --init-from=%t/gpt.safetensors --params-out=%t/init.dp2.params
// RUN: cmp %t/gpt.params %t/init.dp2.params
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json -o %t/tp.plan
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=0 --init-from=%t/gpt.safetensors --params-out=%t/init.tp.params
// RUN: cmp %t/gpt.params %t/init.tp.params
// Training from there starts afresh: AdamW's step at 1, data from step 1.
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=2 --init-from=%t/all.safetensors | FileCheck %s --check-prefix=FRESH
// FRESH: step 1 loss
// FRESH-NEXT: step 2 loss

// Weights from elsewhere: an f32 file written by Python into an f32 plan
// and an f64 plan (converted exactly: f32 widens).
// RUN: python3 %S/Inputs/safetensors.py write %t/gpt.params %t/dp2.plan/plan.json %t/gpt32.safetensors F32
// RUN: %mpiexec -np 2 piper-run %t/dp2.plan --steps=0 --init-from=%t/gpt32.safetensors --params-out=%t/init32.params
// RUN: %numdiff --rel=1e-7 %t/gpt.params %t/init32.params
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=2 --batch=1 -o %t/dp2f32.mlir
// RUN: piper-compile %t/dp2f32.mlir --directives=%t/dp-z3.json -o %t/dp2f32.plan
// RUN: %mpiexec -np 2 piper-run %t/dp2f32.plan --steps=0 --init-from=%t/gpt32.safetensors --params-out=%t/initf32.params
// RUN: cmp %t/init32.params %t/initf32.params

// Weights of another model.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.plan
// RUN: not piper-run %t/mlp.plan --init-from=%t/gpt.safetensors 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: piper-run: {{.*}}gpt.safetensors has no tensor 'layers.0.weight' (a checkpoint of another model?)
// RUN: not piper-run %t/mlp.plan --init-from=%t/nothing.safetensors 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: piper-run: cannot read {{.*}}nothing.safetensors: No such file or directory
