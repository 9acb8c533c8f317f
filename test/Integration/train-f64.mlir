// Compiled plans train like the interpreter: piper-compile + piper-run
// losses for tiny MLP, GPT and MoE in f64 over 5 AdamW steps agree with
// piper-interp to 1e-9 (serial plans), and plans that split the step into 2
// microbatches agree with the serial interpreter at the same global batch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}]}' > %t/split2.json

// Serial.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.plan
// RUN: piper-run %t/mlp.plan --steps=5 --log=%t/mlp.jsonl --params-out=%t/mlp.run.params > %t/mlp.run.txt
// RUN: piper-interp %t/mlp.mlir --steps=5 --optimizer=adamw --params-out=%t/mlp.interp.params > %t/mlp.interp.txt
// RUN: %numdiff %t/mlp.interp.txt %t/mlp.run.txt
// RUN: %numdiff %t/mlp.interp.params %t/mlp.run.params
// RUN: FileCheck %s --check-prefix=LOG --input-file=%t/mlp.jsonl
// The plan's temporaries come from piper-run's buffer cache: every step
// after the first is served entirely by cached buffers (the first step
// already reuses some of its own).
// RUN: piper-run %t/mlp.plan --steps=4 --buffer-stats 2> %t/mlp.buffers.txt > /dev/null
// RUN: python3 -c "import re,sys; a,r,b=map(int,re.findall(r'\d+',open(sys.argv[1]).read())[:3]); sys.exit(0 if a%%4==0 and r>=a-a//4 else 1)" %t/mlp.buffers.txt
// RUN: FileCheck %s --check-prefix=BUFFERS --input-file=%t/mlp.buffers.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir -o %t/gpt.plan
// RUN: piper-run %t/gpt.plan --steps=5 --params-out=%t/gpt.run.params > %t/gpt.run.txt
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.interp.params > %t/gpt.interp.txt
// RUN: %numdiff %t/gpt.interp.txt %t/gpt.run.txt
// RUN: %numdiff %t/gpt.interp.params %t/gpt.run.params
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 -o %t/moe.mlir
// RUN: piper-compile %t/moe.mlir -o %t/moe.plan
// RUN: piper-run %t/moe.plan --steps=5 --params-out=%t/moe.run.params > %t/moe.run.txt
// RUN: piper-interp %t/moe.mlir --steps=5 --optimizer=adamw --params-out=%t/moe.interp.params > %t/moe.interp.txt
// RUN: %numdiff %t/moe.interp.txt %t/moe.run.txt
// RUN: %numdiff %t/moe.interp.params %t/moe.run.params
// RUN: FileCheck %s --input-file=%t/moe.run.txt

// Two microbatches of half the batch each vs the serial step at the whole
// batch.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=2 -o %t/mlp.half.mlir
// RUN: piper-compile %t/mlp.half.mlir --directives=%t/split2.json -o %t/mlp.mb2.plan
// RUN: piper-run %t/mlp.mb2.plan --steps=5 > %t/mlp.mb2.txt
// RUN: %numdiff %t/mlp.interp.txt %t/mlp.mb2.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=1 -o %t/gpt.half.mlir
// RUN: piper-compile %t/gpt.half.mlir --directives=%t/split2.json -o %t/gpt.mb2.plan
// RUN: piper-run %t/gpt.mb2.plan --steps=5 > %t/gpt.mb2.txt
// RUN: %numdiff %t/gpt.interp.txt %t/gpt.mb2.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=1 -o %t/moe.half.mlir
// RUN: piper-compile %t/moe.half.mlir --directives=%t/split2.json -o %t/moe.mb2.plan
// RUN: piper-run %t/moe.mb2.plan --steps=5 > %t/moe.mb2.txt
// RUN: %numdiff %t/moe.interp.txt %t/moe.mb2.txt
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/moe.mb2.plan/plan.json

// CHECK: step 1 loss
// CHECK: step 5 loss
// BUFFERS: piper-run: {{[0-9]+}} allocations, {{[0-9]+}} served from the buffer cache, {{[0-9]+}} bytes reserved
// LOG: {"step": 1, "loss": {{.*}}, "seconds": {{.*}}}
// LOG: {"step": 5, "loss":
// PLAN: "format": "piper-plan"
// PLAN: "kind": "state"
// PLAN: "entry": "piper_entry_step.all"
