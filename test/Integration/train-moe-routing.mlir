// The MoE routing corners and the optimizer updates that lower to linalg
// (MoEToLinalg.cpp, RouterToLinalg.cpp, UpdatesToLinalg.cpp), compiled
// against the f64 interpreter over 5 steps, losses and every parameter:
//  - top_k = 2 with capacity overflow: capacity factor 0.5 gives C = 4 slots
//    for 16 tokens x 2 choices over 4 experts, so the router, dispatch and
//    combine VJPs see dropped pairs;
//  - a zero router weight: every token's probabilities tie at step 1, the
//    lower experts win (0 and 1 for top_k = 2, 0 to 2 for top_k = 3) and
//    overflow their slots;
//  - SGD with momentum and weight decay (the AdamW runs cover AdamW).
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --capacity-factor=0.5 --top-k=2 -o %t/ov.mlir
// RUN: FileCheck %s --check-prefix=GEN --input-file=%t/ov.mlir
// RUN: piper-compile %t/ov.mlir -o %t/ov.plan
// RUN: piper-run %t/ov.plan --steps=5 --params-out=%t/ov.run.params > %t/ov.run.txt
// RUN: piper-interp %t/ov.mlir --steps=5 --optimizer=adamw --params-out=%t/ov.interp.params > %t/ov.interp.txt
// RUN: %numdiff %t/ov.interp.txt %t/ov.run.txt && %numdiff %t/ov.interp.params %t/ov.run.params
// RUN: sed -e 's/\(router.weight", \)normal([0-9.]*)/\1zeros/' %t/ov.mlir > %t/tie.mlir
// RUN: FileCheck %s --check-prefix=TIE --input-file=%t/tie.mlir
// RUN: piper-compile %t/tie.mlir -o %t/tie.plan
// RUN: piper-run %t/tie.plan --steps=5 --params-out=%t/tie.run.params > %t/tie.run.txt
// RUN: piper-interp %t/tie.mlir --steps=5 --optimizer=adamw --params-out=%t/tie.interp.params > %t/tie.interp.txt
// RUN: %numdiff %t/tie.interp.txt %t/tie.run.txt && %numdiff %t/tie.interp.params %t/tie.run.params
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --capacity-factor=0.5 --top-k=3 -o %t/k3.mlir
// RUN: sed -e 's/\(router.weight", \)normal([0-9.]*)/\1zeros/' %t/k3.mlir > %t/k3tie.mlir
// RUN: piper-compile %t/k3tie.mlir -o %t/k3tie.plan
// RUN: piper-run %t/k3tie.plan --steps=5 --params-out=%t/k3tie.run.params > %t/k3tie.run.txt
// RUN: piper-interp %t/k3tie.mlir --steps=5 --optimizer=adamw --params-out=%t/k3tie.interp.params > %t/k3tie.interp.txt
// RUN: %numdiff %t/k3tie.interp.txt %t/k3tie.run.txt && %numdiff %t/k3tie.interp.params %t/k3tie.run.params
// RUN: piper-compile %t/ov.mlir --optimizer=sgd --lr=0.05 --momentum=0.9 --weight-decay=0.01 -o %t/sgd.plan
// RUN: piper-run %t/sgd.plan --steps=5 --params-out=%t/sgd.run.params > %t/sgd.run.txt
// RUN: piper-interp %t/ov.mlir --steps=5 --optimizer=sgd --lr=0.05 --momentum=0.9 --weight-decay=0.01 --params-out=%t/sgd.interp.params > %t/sgd.interp.txt
// RUN: %numdiff %t/sgd.interp.txt %t/sgd.run.txt && %numdiff %t/sgd.interp.params %t/sgd.run.params
// RUN: FileCheck %s --input-file=%t/sgd.run.txt

// GEN: piper.router {{.*}} {top_k = 2 : i64}
// GEN: piper.dispatch {{.*}} {capacity = 4 : i64}
// TIE: router.weight", zeros
// CHECK: step 5 loss
