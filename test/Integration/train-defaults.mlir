// Issue 18: one set of optimizer defaults for every tool
// (runtime/include/piper-rt/train_defaults.h): piper-interp, piper-compile
// and piper-run given no optimizer flag train alike (AdamW, lr 1e-3, betas
// 0.9/0.999, eps 1e-8, weight decay 0.01 except rank < 2 parameters), and
// piper-run's per-step flags are those of piper-interp. Bad values fail with
// one line.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=3 --params-out=%t/interp.params > %t/interp.txt
// RUN: piper-compile %t/gpt.mlir -o %t/gpt.plan | FileCheck %s --check-prefix=BATCH
// RUN: piper-run %t/gpt.plan --steps=3 --params-out=%t/run.params > %t/run.txt
// RUN: %numdiff %t/interp.txt %t/run.txt && %numdiff %t/interp.params %t/run.params
// The defaults are AdamW's: naming them changes nothing.
// RUN: piper-interp %t/gpt.mlir --steps=3 --optimizer=adamw --lr=1e-3 --beta1=0.9 --beta2=0.999 --eps=1e-8 --weight-decay=0.01 --no-decay='rank<2' > %t/explicit.txt
// RUN: diff %t/interp.txt %t/explicit.txt
// ... and decaying the norms and biases too (the old rule) differs.
// RUN: piper-interp %t/gpt.mlir --steps=3 --no-decay=none --params-out=%t/none.params > /dev/null
// RUN: not %numdiff %t/interp.params %t/none.params > /dev/null
// RUN: piper-compile %t/gpt.mlir --no-decay=none -o %t/none.plan
// RUN: piper-run %t/none.plan --steps=3 --params-out=%t/none.run.params > /dev/null
// RUN: %numdiff %t/none.params %t/none.run.params
// A linear schedule set at run time on the same plan.
// RUN: piper-interp %t/gpt.mlir --steps=4 --lr=0.02 --warmup-steps=1 --lr-schedule=linear --min-lr=0.002 --decay-steps=3 > %t/lin.txt
// RUN: piper-run %t/gpt.plan --steps=4 --lr=0.02 --warmup-steps=1 --lr-schedule=linear --min-lr=0.002 --decay-steps=3 --log=%t/lin.jsonl > %t/lin.run.txt
// RUN: %numdiff %t/lin.txt %t/lin.run.txt
// RUN: FileCheck %s --check-prefix=LIN --input-file=%t/lin.jsonl
// LIN: "step": 1, {{.*}}"lr": 0.02,
// LIN: "step": 2, {{.*}}"lr": 0.010999999999999999,
// LIN: "step": 3, {{.*}}"lr": 0.002,
// LIN: "step": 4, {{.*}}"lr": 0.002,

// piper-compile states the batch: 2 sequences of 8 tokens, one replica.
// BATCH: piper-compile: global batch 2 = 2 per replica x 1 replica(s) over [], 1 microbatch(es) of 2 per replica; 16 tokens per step
// BATCH-NEXT: piper-compile: per rank per microbatch: #{{[0-9]+}} [2, 8] #{{[0-9]+}} [16]

// Errors.
// RUN: not piper-run %t/gpt.plan --clip-grad-norm=1 2>&1 | FileCheck %s --check-prefix=NOCLIP
// NOCLIP: piper-run: --clip-grad-norm: this plan was compiled without gradient clipping; compile it with piper-compile --clip-grad-norm=X
// RUN: not piper-run %t/gpt.plan --lr-schedule=step 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: piper-run: --lr-schedule must be constant, cosine or linear, got 'step'
// RUN: not piper-run %t/gpt.plan --lr=-1 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: piper-run: invalid learning-rate schedule: the learning rate must be finite and non-negative
// RUN: not piper-run %t/gpt.plan --warmup-steps=-3 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: piper-run: invalid learning-rate schedule: the warmup step count must be non-negative
// RUN: not piper-interp %t/gpt.mlir --lr-schedule=exp 2>&1 | FileCheck %s --check-prefix=ISCHED
// ISCHED: --lr-schedule must be constant, cosine or linear, got 'exp'
// RUN: not piper-interp %t/gpt.mlir --no-decay=, 2>&1 | FileCheck %s --check-prefix=IDECAY
// IDECAY: no-decay rule ',' has an empty name pattern
// RUN: not piper-interp %t/gpt.mlir --clip-grad-norm=-2 2>&1 | FileCheck %s --check-prefix=ICLIP
// ICLIP: --clip-grad-norm must be finite and non-negative
// RUN: not piper-compile %t/gpt.mlir --no-decay=a,,b -o %t/bad.plan 2>&1 | FileCheck %s --check-prefix=CDECAY
// CDECAY: error: piper-optimizer: no-decay rule 'a,,b' has an empty name pattern
