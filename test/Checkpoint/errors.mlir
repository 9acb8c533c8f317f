// Bad checkpoints and flags give one clear line and a non-zero exit:
// a checkpoint of another model (names, shapes, dtypes), a corrupted piece
// (checksum), a truncated or missing piece file (named, in piper-run
// --resume and piper-ckpt verify), a half-written checkpoint (ignored in
// favour of the last complete one, with a message), and flag misuse.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=2 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.plan
// RUN: piper-run %t/mlp.plan --steps=2 --save=%t/c > %t/saved.txt

// Another model: a wider MLP (shape), the f32 MLP (dtype), a GPT (names).
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=2 --hidden=64 -o %t/wide.mlir
// RUN: piper-compile %t/wide.mlir -o %t/wide.plan
// RUN: not piper-run %t/wide.plan --steps=3 --resume=%t/c 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: piper-run: checkpoint {{.*}}c/step-00000002: tensor 'layers.0.weight' has shape [16, 32], the plan's is [16, 64]
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f32 --mesh=dp=1 --batch=2 -o %t/f32.mlir
// RUN: piper-compile %t/f32.mlir -o %t/f32.plan
// RUN: not piper-run %t/f32.plan --steps=3 --resume=%t/c 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: piper-run: checkpoint {{.*}}c/step-00000002: tensor 'layers.0.weight' is f64, the plan's is f32
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir -o %t/gpt.plan
// RUN: not piper-run %t/gpt.plan --steps=3 --resume=%t/c/step-00000002 2>&1 | FileCheck %s --check-prefix=NAMES
// NAMES: piper-run: checkpoint {{.*}}c/step-00000002 has no tensor 'embed.weight' (a checkpoint of another model?)
// A smaller model than the checkpoint's: a tensor the plan lacks.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=2 --layers=1 -o %t/short.mlir
// RUN: piper-compile %t/short.mlir -o %t/short.plan
// RUN: not piper-run %t/short.plan --steps=3 --resume=%t/c 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: piper-run: checkpoint {{.*}}c/step-00000002 has tensor 'layers.1.weight', which the plan does not (a checkpoint of another model?)

// Flags.
// RUN: not piper-run %t/mlp.plan --save-every=2 2>&1 | FileCheck %s --check-prefix=FLAGS1
// FLAGS1: piper-run: --save-every and --keep need --save
// RUN: not piper-run %t/mlp.plan --resume=%t/c --init-from=%t/x.safetensors 2>&1 | FileCheck %s --check-prefix=FLAGS2
// FLAGS2: piper-run: --resume and --init-from exclude each other
// RUN: not piper-run %t/mlp.plan --resume=%t/c --seed=3 2>&1 | FileCheck %s --check-prefix=SEED
// SEED: piper-run: --resume: the checkpoint was saved with --seed=0, not 3
// RUN: not piper-run %t/mlp.plan --resume=%t/nowhere 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: piper-run: no checkpoint at {{.*}}nowhere
// RUN: mkdir -p %t/empty/step-00000004.tmp
// RUN: not piper-run %t/mlp.plan --resume=%t/empty 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: piper-run: no complete checkpoint in {{.*}}empty (half-written: step-00000004.tmp)

// A half-written checkpoint newer than the last complete one is ignored,
// with a message; the run resumes after step 2 and prints steps 3 and 4.
// RUN: mkdir -p %t/c/step-00000005.tmp
// RUN: piper-run %t/mlp.plan --steps=4 --resume=%t/c > %t/resumed.txt 2> %t/resumed.err
// RUN: FileCheck %s --check-prefix=HALF --input-file=%t/resumed.err
// HALF: piper-run: ignoring half-written checkpoint {{.*}}c/step-00000005.tmp (no index.json)
// HALF-NEXT: piper-run: resuming from {{.*}}c/step-00000002 after step 2
// RUN: FileCheck %s --check-prefix=STEPS --input-file=%t/resumed.txt
// STEPS-NOT: step 2 loss
// STEPS: step 3 loss
// STEPS-NEXT: step 4 loss

// A flipped bit in the last piece (rank 0's AdamW step of head.bias).
// RUN: cp -r %t/c %t/bad
// RUN: python3 -c "f = open('%t/bad/step-00000002/rank-00000.safetensors', 'r+b'); f.seek(-1, 2); b = f.read(1); f.seek(-1, 2); f.write(bytes([b[0] ^ 1]))"
// RUN: not piper-ckpt verify %t/bad/step-00000002 2>&1 | FileCheck %s --check-prefix=CRC
// RUN: not piper-run %t/mlp.plan --steps=3 --resume=%t/bad 2>&1 | FileCheck %s --check-prefix=CRC
// CRC: checkpoint {{.*}}bad/step-00000002: checksum mismatch in rank-00000.safetensors, tensor 'optimizer.head.bias.step' scalar (index 0x{{[0-9a-f]+}}, data 0x{{[0-9a-f]+}})

// The same file cut short by 4 bytes.
// RUN: truncate -s -4 %t/bad/step-00000002/rank-00000.safetensors
// RUN: not piper-ckpt verify %t/bad 2>&1 | FileCheck %s --check-prefix=TRUNC
// RUN: not piper-run %t/mlp.plan --steps=3 --resume=%t/bad 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: checkpoint {{.*}}bad/step-00000002: rank-00000.safetensors is truncated: tensor 'optimizer.head.bias.step' needs bytes [{{[0-9]+}}, {{[0-9]+}}), the file has {{[0-9]+}}

// The file gone: named once by verify, at the first tensor it held.
// RUN: rm %t/bad/step-00000002/rank-00000.safetensors
// RUN: not piper-ckpt verify %t/bad 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not piper-run %t/mlp.plan --steps=3 --resume=%t/bad 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: checkpoint {{.*}}bad/step-00000002: missing rank-00000.safetensors (tensor 'layers.0.weight')
// MISSING-NOT: missing
