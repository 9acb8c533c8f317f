// RUN: piper-opt %s --piper-export-schedule=format=csv -split-input-file -verify-diagnostics -o /dev/null
// --piper-export-schedule needs split, placed pipeline tasks whose edges
// admit an order, and a CSV holds one direction only.

func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @export_needs_placement(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{node 'F{PP=0,MB=0}' has no coordinate along 'pp'; place the stages (transform.piper.place) first}}
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Temporal edges against the data edges leave no order to export.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @export_of_a_cycle(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{the DAG's edges form a cycle: 'F{PP=0,MB=0}' -> 'BI{PP=0,MB=0}' -> 'F{PP=0,MB=0}'}}
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}, after = ["BI{PP=0,MB=0}"]} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "BI{PP=0,MB=0}" @f(%a) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "BW{PP=0,MB=0}" @f(%b) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A weight gradient with no input gradient is not a valid schedule.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @export_missing_input_gradient(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{the DAG's order is not a valid pipeline schedule:}}
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "BW{PP=0,MB=0}" @f(%a) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Stage 0 runs on both ranks (DualPipe's two directions): PyTorch's CSV has
// one pipeline.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @export_bidirectional_as_csv(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error@+1 {{cannot write the schedule as CSV: PyTorch's schedule CSV has one pipeline; 'export_bidirectional_as_csv' has 2 chains (a bidirectional schedule), which it cannot express}}
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "B{PP=0,MB=0}" @f(%a) {tags = {PP = 0, MB = 0}, pass = #piper<pass B>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0,MB=1}" @f(%c) {tags = {PP = 0, MB = 1}, pass = #piper<pass B>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %d : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
