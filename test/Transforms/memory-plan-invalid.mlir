// RUN: piper-opt %s -split-input-file -verify-diagnostics --piper-memory-plan
// A module without a training DAG has nothing to plan.
// RUN: echo 'func.func @f() { return }' | not piper-opt --piper-memory-plan 2>&1 | FileCheck %s --check-prefix=NODAG
// NODAG: error: no piper.dag to plan memory for; build the training DAG (--piper-build-dag) first

// Planning a DAG with placed and unplaced tasks is rejected.
func.func private @body(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
func.func @partly_placed_is_rejected(%x: tensor<2xf64>) -> tensor<2xf64> {
  // expected-error@+1 {{node 'F{PP=1}' has no device group, but 'F{PP=0}' is placed on {pp=0}; place every task (transform.piper.place) before planning memory}}
  %r = piper.dag -> tensor<2xf64> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<2xf64>) -> tensor<2xf64>
    %b = piper.task "F{PP=1}" @body(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<2xf64>) -> tensor<2xf64>
    piper.dag_yield %b : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}

// -----

// Temporal edges closing a cycle leave no order to walk.
func.func private @body(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
func.func @cycle_is_rejected(%x: tensor<2xf64>) -> tensor<2xf64> {
  // expected-error@+1 {{the DAG's data and temporal edges form a cycle}}
  %r = piper.dag -> tensor<2xf64> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, after = ["F{PP=1}"]} : (tensor<2xf64>) -> tensor<2xf64>
    %b = piper.task "F{PP=1}" @body(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<2xf64>) -> tensor<2xf64>
    piper.dag_yield %b : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}

