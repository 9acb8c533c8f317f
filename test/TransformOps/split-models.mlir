// Strategy invariance of microbatching on generated models: tiny GPT and
// tiny MoE (no token dropped: capacity = tokens), PP2, written at 2
// sequences and split into 2 microbatches, train like the same models
// written at 4 sequences: losses and gradients over 3 AdamW steps agree to
// 1e-9.
// RUN: split-file %s %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --pp=2 --dtype=f64 --batch=4 -o %t/gpt4.mlir
// RUN: piper-gen --model=gpt --config=tiny-gpt --pp=2 --dtype=f64 --batch=2 -o %t/gpt2.mlir
// RUN: piper-opt %t/gpt4.mlir --piper-autodiff --piper-build-dag -o %t/gpt4.dag.mlir
// RUN: piper-opt %t/gpt2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/split.mlir" --transform-interpreter -o %t/gpt2x2.dag.mlir
// RUN: piper-interp %t/gpt4.dag.mlir --steps=3 --optimizer=adamw --print-grads > %t/gpt4.txt
// RUN: piper-interp %t/gpt2x2.dag.mlir --steps=3 --optimizer=adamw --print-grads > %t/gpt2x2.txt
// RUN: %numdiff %t/gpt4.txt %t/gpt2x2.txt
// RUN: piper-gen --model=moe --config=tiny-moe --pp=2 --dtype=f64 --batch=4 -o %t/moe4.mlir
// RUN: piper-gen --model=moe --config=tiny-moe --pp=2 --dtype=f64 --batch=2 -o %t/moe2.mlir
// RUN: piper-opt %t/moe4.mlir --piper-autodiff --piper-build-dag -o %t/moe4.dag.mlir
// RUN: piper-opt %t/moe2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/split.mlir" --transform-interpreter -o %t/moe2x2.dag.mlir
// RUN: piper-interp %t/moe4.dag.mlir --steps=3 --optimizer=adamw --print-grads > %t/moe4.txt
// RUN: piper-interp %t/moe2x2.dag.mlir --steps=3 --optimizer=adamw --print-grads > %t/moe2x2.txt
// RUN: %numdiff %t/moe4.txt %t/moe2x2.txt
// RUN: FileCheck %s --input-file=%t/moe2x2.dag.mlir

// Copies per microbatch, one body per chunk and pass.
// CHECK-DAG: piper.task "F{PP=0,MB=0}" @step.F.PP0(
// CHECK-DAG: piper.task "F{PP=0,MB=1}" @step.F.PP0(
// CHECK-DAG: piper.task "BW{PP=1,MB=1}" @step.BW.PP1(
// CHECK-DAG: piper.accumulate "accumulate(F{PP=1}#0)"

//--- split.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
