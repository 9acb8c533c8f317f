// RUN: piper-opt %s -split-input-file --piper-partition -verify-diagnostics
// What --piper-partition rejects, on hand-written DAGs.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// Either every task is placed or none is: an unplaced task among placed
// ones has no program.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{'piper.task' op node 'F{PP=1}' is not placed, but others are; place every task (transform.piper.place) before partitioning}}
    %b = piper.task "F{PP=1}" @body(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// A value crosses device groups only through a transfer.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{'piper.task' op node 'F{PP=1}' on {pp=1} uses a value of {pp=0} without a transfer}}
    %b = piper.task "F{PP=1}" @body(%a) {tags = {PP = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// A DAG collective over an axis that tells programs apart would span
// programs; that is not partitioned yet.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{'piper.collective' op collective 'ar' is over 'pp', an axis that tells device programs apart; collectives across programs are not partitioned yet}}
    %g = piper.collective "ar" all_reduce %a over ["pp"] of @mesh stream "s" {devices = {pp = 0}} : tensor<4xf32>
    piper.dag_yield %g : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func private @body(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = piper.collective "inner" all_reduce %x over ["pp"] of @mesh stream "s" : tensor<4xf32>
  return %g : tensor<4xf32>
}

// The same holds for collectives inside task bodies, which run inside a
// launch of one program.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op body @body holds collective 'inner' over 'pp', an axis that tells device programs apart; in-body collectives must stay within one program}}
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// A DAG is partitioned once.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F" @body(%x) {tags = {}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
// expected-error@+1 {{'piper.program' op already partitions @step; partition a DAG once}}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
}

// -----

func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// Programs name a mesh.
// expected-error@+1 {{'func.func' op needs exactly one piper.mesh in the module to partition its DAG, found 0}}
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F" @body(%x) {tags = {}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2]
func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// Temporal edges must not close a cycle.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op lies on a cycle of data and temporal edges; the DAG cannot be partitioned}}
    %a = piper.task "A" @body(%x) {tags = {}, pass = #piper<pass F>, after = ["B"]} : (tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "B" @body(%a) {tags = {}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
