// RUN: split-file %s %t
// Every bad input is a clear error on stderr and exit status 1, never a
// crash. The error cases are separate files (piper-interp reads one model).

// A missing input file.
// RUN: not piper-interp %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: piper-interp: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

// Flags are checked before the model is read.
// RUN: not piper-interp %t/model.mlir --precision=f16 2>&1 | FileCheck %s --check-prefix=PRECISION
// PRECISION: piper-interp: unknown --precision 'f16'; expected f64, f32 or bf16-mixed
// RUN: not piper-interp %t/model.mlir --optimizer=adam 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: piper-interp: unknown --optimizer 'adam'; expected sgd or adamw
// RUN: not piper-interp %t/model.mlir --steps=0 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: piper-interp: --steps must be at least 1, got 0
// RUN: not piper-interp %t/model.mlir --lr=-1 2>&1 | FileCheck %s --check-prefix=LR
// LR: piper-interp: --lr must be finite and non-negative
// RUN: not piper-interp %t/model.mlir --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: Unknown command line argument '--no-such-flag'

// An unwritable --dump file fails before any training.
// RUN: not piper-interp %t/model.mlir --function=first --dump=%t/no-such-dir/dump.json 2>&1 | FileCheck %s --check-prefix=DUMP --implicit-check-not=loss
// DUMP: piper-interp: cannot open output file '{{.*}}no-such-dir{{/|\\}}dump.json': No such file or directory

// Choosing the function.
// RUN: not piper-interp %t/model.mlir --function=missing 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: piper-interp: no function @missing in '{{.*}}model.mlir'
// RUN: not piper-interp %t/model.mlir 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: piper-interp: '{{.*}}model.mlir' has several functions (@first, @second); choose one with --function
// RUN: piper-interp %t/model.mlir --function=second | FileCheck %s --check-prefix=CHOSEN
// CHOSEN: {{^}}step 1 loss {{[0-9.e+-]+$}}

// Invalid IR: the parser's located error.
// RUN: not piper-interp %t/invalid.mlir 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: invalid.mlir:2:19: error: use of value '%x' expects different type than prior uses

// A model with no parameters has nothing to train.
// RUN: not piper-interp %t/no-params.mlir 2>&1 | FileCheck %s --check-prefix=NOPARAMS
// NOPARAMS: no-params.mlir:1:1: error: piper-interp: @f has no piper.param arguments, so there is nothing to train

// An op the interpreter cannot run (autodiff needs no rule for it, since it
// does not depend on a parameter).
// RUN: not piper-interp %t/unsupported.mlir 2>&1 | FileCheck %s --check-prefix=BADOP
// BADOP: unsupported.mlir:3:8: error: unsupported operation 'math.exp': the interpreter runs piper NN ops, piper.vjp, piper.annotate, optimizer updates, piper.dag nodes, arith.constant and func.return

// A failing kernel: the op's location and the kernel's message.
// RUN: not piper-interp %t/kernel-error.mlir 2>&1 | FileCheck %s --check-prefix=KERNEL
// KERNEL: kernel-error.mlir:4:8: error: piper.embedding: id 12 at position 1 is out of range for a table of 10 rows

// An integer input whose range no use implies.
// RUN: not piper-interp %t/unbound.mlir 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: unbound.mlir:2:14: error: piper-interp: argument #1 of @f ('tensor<2xi64>') is an integer input whose value range cannot be inferred

// A loss that is not a scalar.
// RUN: not piper-interp %t/vector-loss.mlir 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: vector-loss.mlir:1:1: error: piper-interp: @f must return a scalar loss such as tensor<f32> (first)

// The output of --piper-optimizer: the trainer applies the optimizer itself.
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" -o %t/step.mlir
// RUN: not piper-interp %t/step.mlir --function=first 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: piper-interp: @first is a complete training step (it has piper.state arguments, as --piper-optimizer makes); give the model, or its --piper-autodiff form, and choose the optimizer with --optimizer

//--- model.mlir
func.func @first(%w: tensor<2x3xf64> {piper.param = #piper.param<"w", normal(0.1)>}, %labels: tensor<2xi64>) -> tensor<f64> {
  %l = piper.cross_entropy %w, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
func.func @second(%w: tensor<2x3xf64> {piper.param = #piper.param<"w", normal(0.1)>}, %labels: tensor<2xi64>) -> tensor<f64> {
  %l = piper.cross_entropy %w, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}

//--- invalid.mlir
func.func @f(%x: tensor<2xf64>) -> tensor<2xf64> {
  %r = piper.relu %x : tensor<3xf64>
  return %r : tensor<2xf64>
}

//--- no-params.mlir
func.func @f(%x: tensor<2x3xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %l = piper.cross_entropy %x, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}

//--- unsupported.mlir
func.func @f(%w: tensor<3x3xf64> {piper.param = #piper.param<"w", normal(0.1)>},
             %x: tensor<2x3xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %e = math.exp %x : tensor<2x3xf64>
  %o = piper.linear %e, %w : tensor<2x3xf64>, tensor<3x3xf64> -> tensor<2x3xf64>
  %l = piper.cross_entropy %o, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}

//--- kernel-error.mlir
func.func @f(%t: tensor<10x3xf64> {piper.param = #piper.param<"table", normal(0.1)>},
             %labels: tensor<2xi64>) -> tensor<f64> {
  %ids = arith.constant dense<[0, 12]> : tensor<2xi64>
  %e = piper.embedding %t, %ids : tensor<10x3xf64>, tensor<2xi64> -> tensor<2x3xf64>
  %l = piper.cross_entropy %e, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}

//--- unbound.mlir
func.func @f(%w: tensor<2x3xf64> {piper.param = #piper.param<"w", normal(0.1)>},
             %n: tensor<2xi64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %l = piper.cross_entropy %w, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}

//--- vector-loss.mlir
func.func @f(%w: tensor<4xf64> {piper.param = #piper.param<"w", zeros>}) -> tensor<4xf64> {
  %r = piper.relu %w : tensor<4xf64>
  return %r : tensor<4xf64>
}
