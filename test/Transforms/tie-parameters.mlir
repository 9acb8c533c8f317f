// A parameter read on two pipeline stages (the tied embedding and LM head
// of piper-gen --tie-embeddings) through partitioning, the memory plan and
// the simulator. The untagged nodes that sum its gradient contributions,
// accumulate them over microbatches and update it are copied onto both
// stages (`copy_of`), each copy fed the other stage's contribution by a
// transfer; the memory plan counts the table, its gradient and its AdamW
// state on both stages, and the simulator times the exchange.
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json --emit=programs -o %t/programs.mlir
// RUN: FileCheck %s --input-file=%t/programs.mlir
// RUN: piper-opt %t/programs.mlir --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=MEM
// RUN: piper-opt %t/programs.mlir --piper-simulate="costs=unit" -o /dev/null | FileCheck %s --check-prefix=SIM
//
// Untied, the same model has the same per-stage counts (lm_head.weight is
// as large as the table): the copy replaces the head on the last stage.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/untied.mlir
// RUN: piper-compile %t/untied.mlir --directives=%t/pp2.json --emit=programs -o %t/untied.programs.mlir
// RUN: piper-opt %t/untied.programs.mlir --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=MEM

// CHECK: %[[C0:.*]] = piper.transfer "BW{PP=0,MB=0}#9->{pp=1}" %{{.*}} from {pp = 0 : i64} to {pp = 1 : i64} stream "pp"
// CHECK: piper.task "BW{MB=0}" @step.BW(%{{.*}}, %[[C0]]) {devices = {pp = 1 : i64}
// CHECK: %[[C1:.*]] = piper.transfer "BW{PP=1,MB=0}#0->{pp=0}" %{{.*}} from {pp = 1 : i64} to {pp = 0 : i64} stream "pp"
// CHECK: piper.task "BW{MB=0}@{pp=0}" @step.BW(%[[C1]], %{{.*}}) {copy_of = "BW{MB=0}", devices = {pp = 0 : i64}
// CHECK: %[[ACC1:.*]] = piper.accumulate "accumulate(BW{}#0)"
// CHECK: %[[ACC0:.*]] = piper.accumulate "accumulate(BW{}#0)@{pp=0}"
// CHECK: piper.task "UPD{}" @step.UPD(%{{.*}}, %arg0, %[[ACC0]], {{.*}}devices = {pp = 0 : i64}
// CHECK: piper.task "UPD{}@{pp=1}" @step.UPD(%{{.*}}, %arg0, %[[ACC1]], {{.*}}copy_of = "UPD{}", devices = {pp = 1 : i64}
// Both programs write the table and its two AdamW moments and step count.
// CHECK-LABEL: piper.program @step.pp0
// CHECK-DAG: piper.output 1
// CHECK-DAG: piper.output 2
// CHECK-DAG: piper.output 3
// CHECK-DAG: piper.output 4
// CHECK-LABEL: piper.program @step.pp1
// CHECK-DAG: piper.output 1
// CHECK-DAG: piper.output 2
// CHECK-DAG: piper.output 3
// CHECK-DAG: piper.output 4

// At each stage's peak, the second microbatch's weight gradients beside
// their running sum: grads are twice the parameters.
// MEM: pp=0: peak {{[0-9]+}} at step {{[0-9]+}} of {{[0-9]+}} 'BW{PP=0,MB=1}'
// MEM-NEXT: params 24832 grads 49664 optimizer 49744
// MEM: pp=1: peak {{[0-9]+}} at step {{[0-9]+}} of {{[0-9]+}} 'BW{PP=1,MB=1}'
// MEM-NEXT: params 24960 grads 49920 optimizer 50008

// SIM: @step.pp0  {pp=0}
// SIM: @step.pp1  {pp=1}
