// RUN: piper-opt %s --split-input-file --piper-eval-programs | FileCheck %s --enable-var-scope
// RUN: piper-opt %s --split-input-file --piper-eval-programs=only=true --piper-verify-programs | FileCheck %s --check-prefix=ONLY --enable-var-scope

// Two pipeline stages over dp: the evaluation programs keep the forward,
// the activation transfer, the ZeRO-3 all-gather the forward reads and the
// loss; the gradient transfer, backward, gradient all-reduce, update and
// the parameters' outputs go. Records and waits stay; launches keep their
// training trace index.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%w0: tensor<4xf32> {piper.param = #piper.param<"w0", normal(0.02)>},
                %w1: tensor<4xf32> {piper.param = #piper.param<"w1", normal(0.02)>},
                %x: tensor<4xf32>)
    -> (tensor<f32>, tensor<4xf32> {piper.updated = "w0"}, tensor<4xf32> {piper.updated = "w1"}) {
  %l = tensor.empty() : tensor<f32>
  return %l, %w0, %w1 : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
func.func private @f0(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func private @f1(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>)
func.func private @b(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func private @upd(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: piper.program @step.pp0 role
// CHECK: piper.launch "BW{PP=0}"
// CHECK-LABEL: piper.program @step.pp0.eval role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "dp"]
// CHECK-SAME: piper_plan.eval_of = @step.pp0
// CHECK-NEXT: %[[W:.*]] = piper.input 0
// CHECK-NEXT: %[[X:.*]] = piper.input 2
// CHECK-NEXT: %[[G:.*]] = piper.comm "all_gather(w0)" all_gather %[[W]] over ["dp"] on "dp"
// CHECK-NEXT: piper.record 0 on "dp"
// CHECK-NEXT: piper.wait 0 on "compute"
// CHECK-NEXT: %[[H:.*]] = piper.launch "F{PP=0}" @f0(%[[G]], %[[X]]) on "compute" {piper_plan.trace_index = 0 : i64}
// CHECK-NEXT: piper.send "F{PP=0}#0->{pp=1}" %[[H]] to @step.pp1.eval tag 0 on "pp"
// CHECK-NEXT: }
// CHECK-LABEL: piper.program @step.pp1 role
// CHECK-LABEL: piper.program @step.pp1.eval role {pp = 1 : i64}
// CHECK-NEXT: %[[W1:.*]] = piper.input 1
// CHECK-NEXT: %[[A:.*]] = piper.recv "F{PP=0}#0->{pp=1}" from @step.pp0.eval tag 0 on "pp"
// CHECK-NEXT: %[[Y:.*]]:2 = piper.launch "F{PP=1}" @f1(%[[A]], %[[W1]]) on "compute" {piper_plan.trace_index = 0 : i64}
// CHECK-NEXT: piper.output 0 %[[Y]]#1
// CHECK-NEXT: }

// ONLY-NOT: piper.program @step.pp0 role
// ONLY: piper.program @step.pp0.eval role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "dp"] {
// ONLY-NOT: BW
// ONLY: piper.program @step.pp1.eval role {pp = 1 : i64}
// ONLY-NOT: piper.launch "B

piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["compute", "pp", "dp"] {
  %w = piper.input 0 : tensor<4xf32>
  %x = piper.input 2 : tensor<4xf32>
  %g = piper.comm "all_gather(w0)" all_gather %w over ["dp"] on "dp" : tensor<4xf32>
  piper.record 0 on "dp"
  piper.wait 0 on "compute"
  %h = piper.launch "F{PP=0}" @f0(%g, %x) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  piper.send "F{PP=0}#0->{pp=1}" %h to @step.pp1 tag 0 on "pp" : tensor<4xf32>
  %dy = piper.recv "BI{PP=1}#0->{pp=0}" from @step.pp1 tag 0 on "pp" : tensor<4xf32>
  %dw = piper.launch "BW{PP=0}" @b(%dy, %x) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = piper.comm "all_reduce(dw0)" all_reduce %dw over ["dp"] on "dp" : tensor<4xf32>
  %n = piper.launch "UPD{PP=0}" @upd(%w, %r) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  piper.output 1 %n : tensor<4xf32>
}
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["compute", "pp", "dp"] {
  %w = piper.input 1 : tensor<4xf32>
  %a = piper.recv "F{PP=0}#0->{pp=1}" from @step.pp0 tag 0 on "pp" : tensor<4xf32>
  %y:2 = piper.launch "F{PP=1}" @f1(%a, %w) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>)
  %dx = piper.launch "BI{PP=1}" @b(%y#0, %w) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  piper.send "BI{PP=1}#0->{pp=0}" %dx to @step.pp0 tag 0 on "pp" : tensor<4xf32>
  %dw = piper.launch "BW{PP=1}" @b(%y#0, %a) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = piper.launch "UPD{PP=1}" @upd(%w, %dw) on "compute" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  piper.output 0 %y#1 : tensor<f32>
  piper.output 2 %n : tensor<4xf32>
}

// -----

// A collective over the role axis pp that the loss needs in one program is
// kept in every program that issues it (its members), at the same
// position of its communicator, so the evaluation programs still match.

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) -> tensor<f32> {
  %l = tensor.empty() : tensor<f32>
  return %l : tensor<f32>
}
func.func private @loss(tensor<4xf32>) -> tensor<f32>

// CHECK-LABEL: piper.program @a.eval
// CHECK-NEXT: piper.input 0
// CHECK-NEXT: piper.comm "ar0" all_reduce
// CHECK-NEXT: }
// CHECK-LABEL: piper.program @b.eval
// CHECK-NEXT: piper.input 0
// CHECK-NEXT: piper.comm "ar0" all_reduce
// CHECK-NEXT: piper.launch "L"
// CHECK-NEXT: piper.output 0
// CHECK-NEXT: }

piper.program @a role {pp = 0} of @mesh step @step streams ["compute", "g"] {
  %x = piper.input 0 : tensor<4xf32>
  %r0 = piper.comm "ar0" all_reduce %x over ["pp"] on "g" : tensor<4xf32>
  %r1 = piper.comm "ar1" all_reduce %x over ["pp"] on "g" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute", "g"] {
  %x = piper.input 0 : tensor<4xf32>
  %r0 = piper.comm "ar0" all_reduce %x over ["pp"] on "g" : tensor<4xf32>
  %l = piper.launch "L" @loss(%r0) on "compute" : (tensor<4xf32>) -> tensor<f32>
  %r1 = piper.comm "ar1" all_reduce %x over ["pp"] on "g" : tensor<4xf32>
  piper.output 0 %l : tensor<f32>
}
