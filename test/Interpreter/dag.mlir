// The global DAG computes the same training step as the function it was
// built from: identical losses and gradients, bit for bit, over 3 steps.
// RUN: piper-gen --model=moe --config=tiny-moe --pp=2 --dtype=f64 -o %t.moe.mlir
// RUN: piper-opt %t.moe.mlir --piper-autodiff --piper-build-dag -o %t.moe.dag.mlir
// RUN: piper-interp %t.moe.mlir --steps=3 --optimizer=adamw --print-grads > %t.moe.fn.txt
// RUN: piper-interp %t.moe.dag.mlir --steps=3 --optimizer=adamw --print-grads > %t.moe.dag.txt
// RUN: diff %t.moe.fn.txt %t.moe.dag.txt
// RUN: FileCheck %s --input-file=%t.moe.dag.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --pp=2 --dtype=f64 -o %t.gpt.mlir
// RUN: piper-opt %t.gpt.mlir --piper-autodiff --piper-build-dag -o %t.gpt.dag.mlir
// RUN: piper-interp %t.gpt.mlir --steps=2 --print-grads > %t.gpt.fn.txt
// RUN: piper-interp %t.gpt.dag.mlir --steps=2 --print-grads > %t.gpt.dag.txt
// RUN: diff %t.gpt.fn.txt %t.gpt.dag.txt
// RUN: not piper-interp %s --steps=1 2>&1 | FileCheck %s --check-prefix=CYCLE

// CHECK: step 1 loss
// CHECK: grad layers.1.mlp.experts.w_down shape [4, 16, 16]
// CHECK: step 3 loss

// Temporal edges that form a cycle leave nodes that can never run.
// CYCLE: error: piper-interp: the DAG's edges form a cycle; 3 nodes never ran
func.func private @body(%x: tensor<2x2xf64>) -> tensor<2x2xf64> {
  return %x : tensor<2x2xf64>
}
func.func private @loss(%x: tensor<2x2xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %l = piper.cross_entropy %x, %labels : tensor<2x2xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
func.func @cycle(%w: tensor<2x2xf64> {piper.param = #piper.param<"w", normal(0.1)>},
                 %labels: tensor<2xi64>) -> (tensor<f64>, tensor<2x2xf64> {piper.grad = "w"}) {
  %r:2 = piper.dag -> tensor<f64>, tensor<2x2xf64> {
    %a = piper.task "F{PP=0}" @body(%w) {tags = {PP = 0}, pass = #piper<pass F>, after = ["F{PP=1}"]} : (tensor<2x2xf64>) -> tensor<2x2xf64>
    %b = piper.task "F{PP=1}" @body(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<2x2xf64>) -> tensor<2x2xf64>
    %l = piper.task "F{LOSS=0}" @loss(%b, %labels) {tags = {LOSS = 0}, pass = #piper<pass F>} : (tensor<2x2xf64>, tensor<2xi64>) -> tensor<f64>
    piper.dag_yield %l, %b : tensor<f64>, tensor<2x2xf64>
  }
  return %r#0, %r#1 : tensor<f64>, tensor<2x2xf64>
}
