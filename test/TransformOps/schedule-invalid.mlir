// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// transform.piper.schedule and schedule_from_csv check that the DAG is split
// and placed as the schedule needs and pass on the library's constraint
// errors, naming the nodes or numbers involved.

// 1F1B needs at least as many microbatches as ranks: 2 stages, 1 microbatch.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_1f1b_needs_m_at_least_p(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{1F1B needs at least as many microbatches as ranks (m >= p), got m = 1 < p = 2}}
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// DualPipe runs both directions over an even number of ranks.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_dualpipe_needs_even_p(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:18 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB0 = piper.task "F{PP=2,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 2, MB = 0}, pass = #piper<pass F>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB0 = piper.task "BI{PP=2,MB=0}" @f(%F_PP2_MB0) {tags = {PP = 2, MB = 0}, pass = #piper<pass BI>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB0 = piper.task "BW{PP=2,MB=0}" @f(%BI_PP2_MB0) {tags = {PP = 2, MB = 0}, pass = #piper<pass BW>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%BI_PP2_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB1 = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB1 = piper.task "F{PP=1,MB=1}" @f(%F_PP0_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB1 = piper.task "F{PP=2,MB=1}" @f(%F_PP1_MB1) {tags = {PP = 2, MB = 1}, pass = #piper<pass F>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB1 = piper.task "BI{PP=2,MB=1}" @f(%F_PP2_MB1) {tags = {PP = 2, MB = 1}, pass = #piper<pass BI>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB1 = piper.task "BW{PP=2,MB=1}" @f(%BI_PP2_MB1) {tags = {PP = 2, MB = 1}, pass = #piper<pass BW>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB1 = piper.task "BI{PP=1,MB=1}" @f(%BI_PP2_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB1 = piper.task "BW{PP=1,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB1 = piper.task "BI{PP=0,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB1 = piper.task "BW{PP=0,MB=1}" @f(%BI_PP0_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB2 = piper.task "F{PP=0,MB=2}" @f(%x) {tags = {PP = 0, MB = 2}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB2 = piper.task "F{PP=1,MB=2}" @f(%F_PP0_MB2) {tags = {PP = 1, MB = 2}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB2 = piper.task "F{PP=2,MB=2}" @f(%F_PP1_MB2) {tags = {PP = 2, MB = 2}, pass = #piper<pass F>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB2 = piper.task "BI{PP=2,MB=2}" @f(%F_PP2_MB2) {tags = {PP = 2, MB = 2}, pass = #piper<pass BI>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB2 = piper.task "BW{PP=2,MB=2}" @f(%BI_PP2_MB2) {tags = {PP = 2, MB = 2}, pass = #piper<pass BW>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB2 = piper.task "BI{PP=1,MB=2}" @f(%BI_PP2_MB2) {tags = {PP = 1, MB = 2}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB2 = piper.task "BW{PP=1,MB=2}" @f(%BI_PP1_MB2) {tags = {PP = 1, MB = 2}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB2 = piper.task "BI{PP=0,MB=2}" @f(%BI_PP1_MB2) {tags = {PP = 0, MB = 2}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB2 = piper.task "BW{PP=0,MB=2}" @f(%BI_PP0_MB2) {tags = {PP = 0, MB = 2}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB3 = piper.task "F{PP=0,MB=3}" @f(%x) {tags = {PP = 0, MB = 3}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB3 = piper.task "F{PP=1,MB=3}" @f(%F_PP0_MB3) {tags = {PP = 1, MB = 3}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB3 = piper.task "F{PP=2,MB=3}" @f(%F_PP1_MB3) {tags = {PP = 2, MB = 3}, pass = #piper<pass F>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB3 = piper.task "BI{PP=2,MB=3}" @f(%F_PP2_MB3) {tags = {PP = 2, MB = 3}, pass = #piper<pass BI>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB3 = piper.task "BW{PP=2,MB=3}" @f(%BI_PP2_MB3) {tags = {PP = 2, MB = 3}, pass = #piper<pass BW>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB3 = piper.task "BI{PP=1,MB=3}" @f(%BI_PP2_MB3) {tags = {PP = 1, MB = 3}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB3 = piper.task "BW{PP=1,MB=3}" @f(%BI_PP1_MB3) {tags = {PP = 1, MB = 3}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB3 = piper.task "BI{PP=0,MB=3}" @f(%BI_PP1_MB3) {tags = {PP = 0, MB = 3}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB3 = piper.task "BW{PP=0,MB=3}" @f(%BI_PP0_MB3) {tags = {PP = 0, MB = 3}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB4 = piper.task "F{PP=0,MB=4}" @f(%x) {tags = {PP = 0, MB = 4}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB4 = piper.task "F{PP=1,MB=4}" @f(%F_PP0_MB4) {tags = {PP = 1, MB = 4}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB4 = piper.task "F{PP=2,MB=4}" @f(%F_PP1_MB4) {tags = {PP = 2, MB = 4}, pass = #piper<pass F>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB4 = piper.task "BI{PP=2,MB=4}" @f(%F_PP2_MB4) {tags = {PP = 2, MB = 4}, pass = #piper<pass BI>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB4 = piper.task "BW{PP=2,MB=4}" @f(%BI_PP2_MB4) {tags = {PP = 2, MB = 4}, pass = #piper<pass BW>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB4 = piper.task "BI{PP=1,MB=4}" @f(%BI_PP2_MB4) {tags = {PP = 1, MB = 4}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB4 = piper.task "BW{PP=1,MB=4}" @f(%BI_PP1_MB4) {tags = {PP = 1, MB = 4}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB4 = piper.task "BI{PP=0,MB=4}" @f(%BI_PP1_MB4) {tags = {PP = 0, MB = 4}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB4 = piper.task "BW{PP=0,MB=4}" @f(%BI_PP0_MB4) {tags = {PP = 0, MB = 4}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB5 = piper.task "F{PP=0,MB=5}" @f(%x) {tags = {PP = 0, MB = 5}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB5 = piper.task "F{PP=1,MB=5}" @f(%F_PP0_MB5) {tags = {PP = 1, MB = 5}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB5 = piper.task "F{PP=2,MB=5}" @f(%F_PP1_MB5) {tags = {PP = 2, MB = 5}, pass = #piper<pass F>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB5 = piper.task "BI{PP=2,MB=5}" @f(%F_PP2_MB5) {tags = {PP = 2, MB = 5}, pass = #piper<pass BI>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB5 = piper.task "BW{PP=2,MB=5}" @f(%BI_PP2_MB5) {tags = {PP = 2, MB = 5}, pass = #piper<pass BW>, devices = {pp = 2}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB5 = piper.task "BI{PP=1,MB=5}" @f(%BI_PP2_MB5) {tags = {PP = 1, MB = 5}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB5 = piper.task "BW{PP=1,MB=5}" @f(%BI_PP1_MB5) {tags = {PP = 1, MB = 5}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB5 = piper.task "BI{PP=0,MB=5}" @f(%BI_PP1_MB5) {tags = {PP = 0, MB = 5}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB5 = piper.task "BW{PP=0,MB=5}" @f(%BI_PP0_MB5) {tags = {PP = 0, MB = 5}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP2_MB0, %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP2_MB1, %BW_PP1_MB1, %BW_PP0_MB1, %BW_PP2_MB2, %BW_PP1_MB2, %BW_PP0_MB2, %BW_PP2_MB3, %BW_PP1_MB3, %BW_PP0_MB3, %BW_PP2_MB4, %BW_PP1_MB4, %BW_PP0_MB4, %BW_PP2_MB5, %BW_PP1_MB5, %BW_PP0_MB5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11, %r#12, %r#13, %r#14, %r#15, %r#16, %r#17 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{DualPipe needs an even number of ranks, got p = 3}}
    transform.piper.schedule "dualpipe" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A DAG that is not split into microbatches cannot be scheduled.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_needs_microbatches(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %F_PP0 = piper.task "F{PP=0}" @f(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1 = piper.task "F{PP=1}" @f(%F_PP0) {tags = {PP = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1 = piper.task "BI{PP=1}" @f(%F_PP1) {tags = {PP = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1 = piper.task "BW{PP=1}" @f(%BI_PP1) {tags = {PP = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0 = piper.task "BI{PP=0}" @f(%BI_PP1) {tags = {PP = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0 = piper.task "BW{PP=0}" @f(%BI_PP0) {tags = {PP = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1, %BW_PP0 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{node 'F{PP=0}' has no MB tag; split the DAG into microbatches (transform.piper.split) first}}
    transform.piper.schedule "gpipe" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Microbatches are numbered without gaps.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_microbatch_gap(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:4 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB2 = piper.task "F{PP=0,MB=2}" @f(%x) {tags = {PP = 0, MB = 2}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB2 = piper.task "F{PP=1,MB=2}" @f(%F_PP0_MB2) {tags = {PP = 1, MB = 2}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB2 = piper.task "BI{PP=1,MB=2}" @f(%F_PP1_MB2) {tags = {PP = 1, MB = 2}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB2 = piper.task "BW{PP=1,MB=2}" @f(%BI_PP1_MB2) {tags = {PP = 1, MB = 2}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB2 = piper.task "BI{PP=0,MB=2}" @f(%BI_PP1_MB2) {tags = {PP = 0, MB = 2}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB2 = piper.task "BW{PP=0,MB=2}" @f(%BI_PP0_MB2) {tags = {PP = 0, MB = 2}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP1_MB2, %BW_PP0_MB2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{no pipeline task has MB = 1, but one has MB = 2: microbatches must be numbered from 0 without gaps}}
    transform.piper.schedule "gpipe" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Every action needs its tasks: microbatch 1 of stage 0 has no backward.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_missing_backward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:3 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB1 = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB1 = piper.task "F{PP=1,MB=1}" @f(%F_PP0_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB1 = piper.task "BI{PP=1,MB=1}" @f(%F_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB1 = piper.task "BW{PP=1,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP1_MB1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{1f1b runs 0B1, but no task has PASS = BI, PP = 0 and MB = 1}}
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Stages must be placed before scheduling.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_needs_placement(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:4 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB1 = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB1 = piper.task "F{PP=1,MB=1}" @f(%F_PP0_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB1 = piper.task "BI{PP=1,MB=1}" @f(%F_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB1 = piper.task "BW{PP=1,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BW>} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB1 = piper.task "BI{PP=0,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BI>} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB1 = piper.task "BW{PP=0,MB=1}" @f(%BI_PP0_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BW>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP1_MB1, %BW_PP0_MB1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{node 'F{PP=0,MB=0}' has no coordinate along 'pp'; place the stages (transform.piper.place) first}}
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// The V schedules run two stages per rank.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_zbv_needs_two_stages_per_rank(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:4 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB1 = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB1 = piper.task "F{PP=1,MB=1}" @f(%F_PP0_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB1 = piper.task "BI{PP=1,MB=1}" @f(%F_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB1 = piper.task "BW{PP=1,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB1 = piper.task "BI{PP=0,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB1 = piper.task "BW{PP=0,MB=1}" @f(%BI_PP0_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP1_MB1, %BW_PP0_MB1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{zb-v runs two stages per rank, but the DAG has 2 stages (PP tags) on 2 ranks}}
    transform.piper.schedule "zb-v" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// ZB-V holds stages r and 2p-1-r on rank r; stage 3 placed on rank 1 is wrong.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_zbv_wrong_placement(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:8 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB0 = piper.task "F{PP=2,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 2, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP3_MB0 = piper.task "F{PP=3,MB=0}" @f(%F_PP2_MB0) {tags = {PP = 3, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP3_MB0 = piper.task "BI{PP=3,MB=0}" @f(%F_PP3_MB0) {tags = {PP = 3, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP3_MB0 = piper.task "BW{PP=3,MB=0}" @f(%BI_PP3_MB0) {tags = {PP = 3, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB0 = piper.task "BI{PP=2,MB=0}" @f(%BI_PP3_MB0) {tags = {PP = 2, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB0 = piper.task "BW{PP=2,MB=0}" @f(%BI_PP2_MB0) {tags = {PP = 2, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%BI_PP2_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB1 = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB1 = piper.task "F{PP=1,MB=1}" @f(%F_PP0_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP2_MB1 = piper.task "F{PP=2,MB=1}" @f(%F_PP1_MB1) {tags = {PP = 2, MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP3_MB1 = piper.task "F{PP=3,MB=1}" @f(%F_PP2_MB1) {tags = {PP = 3, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP3_MB1 = piper.task "BI{PP=3,MB=1}" @f(%F_PP3_MB1) {tags = {PP = 3, MB = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP3_MB1 = piper.task "BW{PP=3,MB=1}" @f(%BI_PP3_MB1) {tags = {PP = 3, MB = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP2_MB1 = piper.task "BI{PP=2,MB=1}" @f(%BI_PP3_MB1) {tags = {PP = 2, MB = 1}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP2_MB1 = piper.task "BW{PP=2,MB=1}" @f(%BI_PP2_MB1) {tags = {PP = 2, MB = 1}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB1 = piper.task "BI{PP=1,MB=1}" @f(%BI_PP2_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB1 = piper.task "BW{PP=1,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB1 = piper.task "BI{PP=0,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB1 = piper.task "BW{PP=0,MB=1}" @f(%BI_PP0_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP3_MB0, %BW_PP2_MB0, %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP3_MB1, %BW_PP2_MB1, %BW_PP1_MB1, %BW_PP0_MB1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{node 'F{PP=3,MB=0}' is on {pp=1}, but zb-v runs its action 3F0 on rank 0}}
    transform.piper.schedule "zb-v" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A CSV schedule must fit the DAG.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_from_csv_shape_mismatch(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:4 = piper.dag -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP0_MB1 = piper.task "F{PP=0,MB=1}" @f(%x) {tags = {PP = 0, MB = 1}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB1 = piper.task "F{PP=1,MB=1}" @f(%F_PP0_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB1 = piper.task "BI{PP=1,MB=1}" @f(%F_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB1 = piper.task "BW{PP=1,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 1, MB = 1}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB1 = piper.task "BI{PP=0,MB=1}" @f(%BI_PP1_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB1 = piper.task "BW{PP=0,MB=1}" @f(%BI_PP0_MB1) {tags = {PP = 0, MB = 1}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0, %BW_PP1_MB1, %BW_PP0_MB1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{the CSV schedule has 2 stages, 3 microbatches and 2 ranks, but the DAG has 2 stages, 2 microbatches and 2 ranks}}
    transform.piper.schedule_from_csv text "0F0,0F1,0F2,0B0,0B1,0B2\n1F0,1F1,1F2,1B0,1B1,1B2" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// A CSV schedule must be valid: rank 0 lists a backward before the forward it needs.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
func.func @schedule_from_csv_deadlock(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %F_PP0_MB0 = piper.task "F{PP=0,MB=0}" @f(%x) {tags = {PP = 0, MB = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %F_PP1_MB0 = piper.task "F{PP=1,MB=0}" @f(%F_PP0_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP1_MB0 = piper.task "BI{PP=1,MB=0}" @f(%F_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BI>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP1_MB0 = piper.task "BW{PP=1,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 1, MB = 0}, pass = #piper<pass BW>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    %BI_PP0_MB0 = piper.task "BI{PP=0,MB=0}" @f(%BI_PP1_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BI>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %BW_PP0_MB0 = piper.task "BW{PP=0,MB=0}" @f(%BI_PP0_MB0) {tags = {PP = 0, MB = 0}, pass = #piper<pass BW>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %BW_PP1_MB0, %BW_PP0_MB0 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{the CSV schedule is not a valid schedule: deadlock: the per-rank orders wait on each other in a cycle: rank 0 is stuck at 0B0 (action 0), waiting for 0F0 (rank 0, action 1)}}
    transform.piper.schedule_from_csv text "0B0,0F0\n1F0,1B0" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// Names are those of the library.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.schedule' op unknown schedule '1f2b'; expected one of gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipe, dualpipev}}
    transform.piper.schedule "1f2b" in %root : !transform.any_op
    transform.yield
  }
}

// -----

// schedule_from_csv reads a file or a string, not both.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error@+1 {{'transform.piper.schedule_from_csv' op takes exactly one of `file` and `text`}}
    transform.piper.schedule_from_csv file "a.csv" text "0F0" in %root : !transform.any_op
    transform.yield
  }
}
