// A tiny GPT whose 512-word head outweighs half a layer, cut by
// `balance` (FLOPs) into two pipeline stages (layers 0-2 and layer 3's
// attention | layer 3's MLP, the head and the loss) instead of piper-gen's
// 2 + 2 layers, compiled from one JSON strategy (balance, 2 microbatches,
// place, 1F1B) and trained for 5 AdamW steps by `mpiexec -np 2 piper-run`.
// Losses and parameters match the serial interpreter on the unsplit model.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"balance": {"stages": 2, "cost": "flops"}}, {"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/balanced.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --vocab=512 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.interp.params > %t/gpt.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --vocab=512 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.pp.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/balanced.json -o %t/gpt.plan
// The balanced cut: the second stage's program reads step arguments 33
// (layers.3.mlp_norm.weight) to 38 (lm_head.weight) and no earlier one.
// RUN: FileCheck %s --check-prefix=CUT --input-file=%t/gpt.plan/strategy.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/balanced.json --emit=programs -o %t/programs.mlir
// RUN: FileCheck %s --check-prefix=PROGRAMS --input-file=%t/programs.mlir
// RUN: %mpiexec -np 2 piper-run %t/gpt.plan --steps=5 --params-out=%t/gpt.params > %t/gpt.txt
// RUN: %numdiff %t/gpt.interp.txt %t/gpt.txt
// RUN: %numdiff %t/gpt.interp.params %t/gpt.params
// RUN: FileCheck %s --input-file=%t/gpt.txt

// CUT: transform.named_sequence @__transform_model
// CUT-NEXT: transform.piper.balance %root into 2 stages {cost = "flops"}
// PROGRAMS: %arg33: tensor<16xf64> {piper.param = #piper.param<"layers.3.mlp_norm.weight"
// PROGRAMS: piper.program @step.pp1
// PROGRAMS-NEXT: piper.input 33 : tensor<16xf64>
// PROGRAMS: piper.input 38 : tensor<16x512xf64>
// PROGRAMS-NOT: piper.input {{[0-9]}} :
// PROGRAMS-NOT: piper.input {{[1-2][0-9]|3[0-2]}} :
// CHECK: step 1 loss
// CHECK: step 5 loss
