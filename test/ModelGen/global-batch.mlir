// One statement of the batch: piper-gen --global-batch derives the model's
// batch (one microbatch of one replica) from the strategy's split count and
// replicated axes; piper-compile --global-batch checks the compiled plan
// trains on exactly that many sequences per step.
//
// PP2 x DP2, split 4: 16 = 2 replicas x 4 microbatches x 2 sequences.
// RUN: piper-gen --config=tiny-gpt --pp=2 --mesh=pp=2,dp=2 --global-batch=16 --strategy=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json -o %t.gpt.mlir 2>&1 | FileCheck %s --check-prefix=GPT
// GPT: piper-gen: global batch 16 = 2 replica(s) over [dp] x 8, 4 microbatch(es) of 2
// RUN: FileCheck %s --check-prefix=GPTIR < %t.gpt.mlir
// GPTIR: %ids: tensor<2x8xi64>, %labels: tensor<16xi64>
// RUN: piper-compile %t.gpt.mlir --directives=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json --global-batch=16 --emit=programs -o /dev/null
// RUN: not piper-compile %t.gpt.mlir --directives=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json --global-batch=32 --emit=programs -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: piper-compile: --global-batch=32, but the model and strategy train on 16 (4 microbatch(es) of 2 x 2 replica(s) over [dp]); regenerate the model with piper-gen --global-batch=32 --strategy=...
//
// The MoE strategy replicates dense weights over dp and ep: data divides
// over both (4 replicas).
// RUN: piper-gen --config=tiny-moe --pp=2 --mesh=pp=2,dp=2,ep=2 --global-batch=32 --strategy=%S/../../examples/strategies/tiny-moe-pp2-ep2-dp2-1f1b.json -o %t.moe.mlir 2>&1 | FileCheck %s --check-prefix=MOE
// MOE: piper-gen: global batch 32 = 4 replica(s) over [dp, ep] x 8, 4 microbatch(es) of 2
// RUN: piper-compile %t.moe.mlir --directives=%S/../../examples/strategies/tiny-moe-pp2-ep2-dp2-1f1b.json --global-batch=32 --emit=programs -o /dev/null
//
// Without data parallelism the global batch is split n microbatches.
// RUN: piper-gen --config=tiny-gpt --pp=2 --mesh=pp=2 --global-batch=6 --strategy=%S/../../examples/strategies/tiny-pp2-1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=PP
// PP: piper-gen: global batch 6 = 1 replica(s) over [] x 6, 2 microbatch(es) of 3
//
// Batches that do not divide, and inconsistent flags: one line each.
// RUN: not piper-gen --config=tiny-gpt --pp=2 --mesh=pp=2,dp=2 --global-batch=9 --strategy=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPLICAS
// REPLICAS: piper-gen: error: --global-batch=9 does not divide over 2 data-parallel replicas (mesh axes [dp] of {{.*}}lm-pp2-dp2-1f1b.json)
// RUN: not piper-gen --config=tiny-gpt --pp=2 --mesh=pp=2,dp=2 --global-batch=12 --strategy=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=MICRO
// MICRO: piper-gen: error: --global-batch=12 gives 6 per replica, which {{.*}}lm-pp2-dp2-1f1b.json's split into 4 microbatches does not divide
// RUN: not piper-gen --config=tiny-gpt --pp=2 --mesh=pp=2 --global-batch=8 --strategy=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: piper-gen: error: {{.*}}lm-pp2-dp2-1f1b.json replicates over mesh axis 'dp', which --mesh does not have
// RUN: not piper-gen --config=tiny-gpt --global-batch=8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEEDS
// NEEDS: piper-gen: error: --global-batch needs --strategy=FILE.json and --mesh (the replicas it divides over)
// RUN: not piper-gen --config=tiny-gpt --mesh=dp=2 --global-batch=8 --batch=2 --strategy=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: piper-gen: error: give --batch (one microbatch of one replica) or --global-batch, not both
// RUN: not piper-gen --config=tiny-gpt --mesh=dp=2 --global-batch=0 --strategy=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: piper-gen: error: --global-batch must be a positive integer, got 0
// RUN: echo '{' > %t.bad.json
// RUN: not piper-gen --config=tiny-gpt --mesh=dp=2 --global-batch=8 --strategy=%t.bad.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: piper-gen: error: {{.*}}.bad.json: invalid JSON: [2:0, byte=2]: Expected object key
// RUN: echo '{"directives": [{"split": {"n": 0}}]}' > %t.split0.json
// RUN: not piper-gen --config=tiny-gpt --mesh=dp=2 --global-batch=8 --strategy=%t.split0.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: piper-gen: error: {{.*}}.split0.json: directives[0].split.n must be a positive integer
// RUN: not piper-compile %t.gpt.mlir --directives=%S/../../examples/strategies/lm-pp2-dp2-1f1b.json --global-batch=-1 --emit=programs -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: piper-compile: --global-batch must be a positive integer, got -1
