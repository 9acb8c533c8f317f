// RUN: piper-opt %s | piper-opt | FileCheck %s --enable-var-scope
// Round trip of the device-program ops: two pipeline roles of a two-stage
// step, every instruction kind once.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<f32>, tensor<8x8xf32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<8x8xf32>
}
func.func private @step.F.PP0(tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
func.func private @step.F.PP1(tensor<2x8xf32>) -> tensor<f32>

// CHECK-LABEL: piper.program @step.pp0 role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "dp_grad"] {
// CHECK-NEXT:    %[[X:.*]] = piper.input 0 microbatch 0 of 2 along 0 : tensor<2x8xf32>
// CHECK-NEXT:    %[[W:.*]] = piper.input 1 : tensor<8x8xf32>
// CHECK-NEXT:    %[[H:.*]] = piper.launch "F{PP=0,MB=0}" @step.F.PP0(%[[X]], %[[W]]) on "compute" {overlap = "BI{PP=1,MB=0}", sm_share = 5.000000e-01 : f64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    piper.record 0 on "compute"
// CHECK-NEXT:    piper.wait 0 on "pp"
// CHECK-NEXT:    piper.send "F{PP=0,MB=0}#0->{pp=1}" %[[H]] to @step.pp1 tag 0 on "pp" : tensor<2x8xf32>
// CHECK-NEXT:    %[[S:.*]] = piper.sum "accumulate(w)" %[[W]], %[[W]] scale 5.000000e-01 on "compute" : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[G:.*]] = piper.comm "all_reduce(w)" all_reduce %[[S]] over ["dp"] on "dp_grad" {bucket = 0 : i64} : tensor<8x8xf32>
// CHECK-NEXT:    piper.output 1 %[[G]] : tensor<8x8xf32>
// CHECK-NEXT:  }
piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["compute", "pp", "dp_grad"] {
  %x = piper.input 0 microbatch 0 of 2 along 0 : tensor<2x8xf32>
  %w = piper.input 1 : tensor<8x8xf32>
  %h = piper.launch "F{PP=0,MB=0}" @step.F.PP0(%x, %w) on "compute" {overlap = "BI{PP=1,MB=0}", sm_share = 0.5 : f64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  piper.record 0 on "compute"
  piper.wait 0 on "pp"
  piper.send "F{PP=0,MB=0}#0->{pp=1}" %h to @step.pp1 tag 0 on "pp" : tensor<2x8xf32>
  %s = piper.sum "accumulate(w)" %w, %w scale 0.5 on "compute" : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %g = piper.comm "all_reduce(w)" all_reduce %s over ["dp"] on "dp_grad" {bucket = 0 : i64} : tensor<8x8xf32>
  piper.output 1 %g : tensor<8x8xf32>
}

// CHECK-LABEL: piper.program @step.pp1 role {pp = 1 : i64} of @mesh step @step streams ["compute", "pp"] {
// CHECK-NEXT:    %[[H:.*]] = piper.recv "F{PP=0,MB=0}#0->{pp=1}" from @step.pp0 tag 0 on "pp" : tensor<2x8xf32>
// CHECK-NEXT:    piper.record 0 on "pp"
// CHECK-NEXT:    piper.wait 0 on "compute"
// CHECK-NEXT:    %[[L:.*]] = piper.launch "F{PP=1,MB=0}" @step.F.PP1(%[[H]]) on "compute" : (tensor<2x8xf32>) -> tensor<f32>
// CHECK-NEXT:    piper.output 0 %[[L]] : tensor<f32>
// CHECK-NEXT:  }
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["compute", "pp"] {
  %h = piper.recv "F{PP=0,MB=0}#0->{pp=1}" from @step.pp0 tag 0 on "pp" : tensor<2x8xf32>
  piper.record 0 on "pp"
  piper.wait 0 on "compute"
  %l = piper.launch "F{PP=1,MB=0}" @step.F.PP1(%h) on "compute" : (tensor<2x8xf32>) -> tensor<f32>
  piper.output 0 %l : tensor<f32>
}
