// RUN: piper-opt %s --transform-interpreter -split-input-file -verify-diagnostics
// split checks that the nodes form a contiguous sub-DAG whose only outputs
// are sums (gradients, the loss), that every user of the data is split,
// and that communication has not been added yet, naming the nodes.

// Stage 0 alone is not contiguous: its forward and backward are joined
// through stage 1.
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{the nodes to split must form a contiguous sub-DAG, but the path from 'F{PP=0}' to 'B{PP=0}' leaves it through 'F{PP=1}'}}
    %s = transform.piper.split %n into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A forward activation cannot leave the copies: only sums can.
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{forward value #0 of 'F{PP=1}' feeds 'B{PP=1}', which is not split; split its consumers too}}
    %s = transform.piper.split %n into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// The data argument takes the global batch, so every user must be split.
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{data argument 'arg1' is also used by 'F{PP=0}', which is not split}}
    %s = transform.piper.split %n into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {PASS = "UPD"} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{the handle holds no forward or backward node to split}}
    %s = transform.piper.split %n into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %s = transform.piper.split %n into 2 microbatches : (!transform.any_op) -> !transform.any_op
    %m = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{PP=0,MB=0}' is already split into microbatches}}
    %t = transform.piper.split %m into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{node 'F{PP=0}' already feeds 'F{PP=0}#0->{pp=1}'; apply split before place, replicate and shard}}
    %s = transform.piper.split %n into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func private @id(tensor<4xf32>) -> tensor<4xf32>
func.func private @id2(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @f(%w: tensor<4xf32> {piper.param = #piper.param<"w", zeros>}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %a = piper.task "F{PP=0}" @id2(%x, %w) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = piper.task "F{PP=1}" @id(%a) {tags = {PP = 1}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = piper.task "B{PP=1}" @id(%b) {tags = {PP = 1}, pass = #piper<pass B>} : (tensor<4xf32>) -> tensor<4xf32>
    %d = piper.task "B{PP=0}" @id2(%c, %x) {tags = {PP = 0}, pass = #piper<pass B>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = piper.task "UPD{PP=0}" @id2(%w, %d) {tags = {PP = 0}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b, %u : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{data argument 'arg1' of type 'tensor<4xf32>' has no static dimension 1 to split into microbatches}}
    %s = transform.piper.split %n into 2 microbatches along 1 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{'transform.piper.split' op needs a count of at least 1, got 0}}
    %s = transform.piper.split %n into 0 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %n = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error@+1 {{'transform.piper.split' op needs a non-negative dimension, got -1}}
    %s = transform.piper.split %n into 2 microbatches along -1 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
