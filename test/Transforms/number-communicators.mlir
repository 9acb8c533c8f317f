// RUN: piper-opt %s -split-input-file --piper-number-communicators | FileCheck %s --enable-var-scope
// --piper-number-communicators numbers every (axes, stream) communicator of
// the programs, sorted, tags each collective with its index and the module
// with the list and the batch axes.

// Two pipeline stages reduce over dp on one stream and gather ZeRO shards on
// another: two communicators, shared by both programs; dp is the batch axis.
// CHECK-LABEL: module attributes
// CHECK-SAME:    piper_plan.batch_axes = ["dp"]
// CHECK-SAME:    piper_plan.communicators = {{\[\[\[}}"dp"], "dp_grad"], {{\[\[}}"dp"], "dp_param"]]
// CHECK-LABEL: piper.program @stages.pp0
// CHECK:         piper.comm "rs0" reduce_scatter %{{.*}} over ["dp"] on "dp_grad" {piper_plan.comm = 0 : i64}
// CHECK:         piper.comm "ag0" all_gather %{{.*}} over ["dp"] on "dp_param" {piper_plan.comm = 1 : i64}
// CHECK-LABEL: piper.program @stages.pp1
// CHECK:         piper.comm "ar1" all_reduce %{{.*}} over ["dp"] on "dp_grad" {piper_plan.comm = 0 : i64}
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @stages(%x: tensor<4xf32>) {
  return
}
piper.program @stages.pp0 role {pp = 0} of @mesh step @stages streams ["compute", "dp_grad", "dp_param"] {
  %x = piper.input 0 : tensor<4xf32>
  %s = piper.comm "rs0" reduce_scatter %x over ["dp"] on "dp_grad" : tensor<4xf32>
  %g = piper.comm "ag0" all_gather %s over ["dp"] on "dp_param" : tensor<4xf32>
}
piper.program @stages.pp1 role {pp = 1} of @mesh step @stages streams ["compute", "dp_grad"] {
  %x = piper.input 0 : tensor<4xf32>
  %r = piper.comm "ar1" all_reduce %x over ["dp"] on "dp_grad" : tensor<4xf32>
}

// -----

// Keys hold their axes in mesh order, whatever order the op lists them in,
// and sort by axes, then stream. Only reductions make batch axes: the
// all_gather over tp does not.
// CHECK-LABEL: module attributes
// CHECK-SAME:    piper_plan.batch_axes = ["dp", "ep"]
// CHECK-SAME:    piper_plan.communicators = {{\[\[\[}}"dp", "ep"], "a"], {{\[\[}}"dp", "ep"], "b"], {{\[\[}}"tp"], "a"]]
// CHECK-LABEL: piper.program @order.all
// CHECK:         piper.comm "ar_b" all_reduce %{{.*}} over ["ep", "dp"] on "b" {piper_plan.comm = 1 : i64}
// CHECK:         piper.comm "ag_tp" all_gather %{{.*}} over ["tp"] on "a" {piper_plan.comm = 2 : i64}
// CHECK:         piper.comm "ar_a" all_reduce %{{.*}} over ["dp", "ep"] on "a" {piper_plan.comm = 0 : i64}
// CHECK:         piper.comm "ar_a2" all_reduce %{{.*}} over ["ep", "dp"] on "a" {piper_plan.comm = 0 : i64}
piper.mesh @mesh axes = [dp = 2, ep = 2, tp = 2]
func.func @order(%x: tensor<4xf32>) {
  return
}
piper.program @order.all role {} of @mesh step @order streams ["a", "b"] {
  %x = piper.input 0 : tensor<4xf32>
  %b = piper.comm "ar_b" all_reduce %x over ["ep", "dp"] on "b" : tensor<4xf32>
  %t = piper.comm "ag_tp" all_gather %b over ["tp"] on "a" : tensor<4xf32>
  %a = piper.comm "ar_a" all_reduce %t over ["dp", "ep"] on "a" : tensor<4xf32>
  %a2 = piper.comm "ar_a2" all_reduce %a over ["ep", "dp"] on "a" : tensor<4xf32>
}

// -----

// The collectives inside a launched body get communicators too, once per
// body however often it is launched; a body no program launches is left
// alone, and its collectives make no communicator.
// CHECK-LABEL: module attributes
// CHECK-SAME:    piper_plan.batch_axes = []
// CHECK-SAME:    piper_plan.communicators = {{\[\[\[}}"ep"], "ep"]]
// CHECK-LABEL: func.func private @experts(
// CHECK:         piper.collective "to_experts" all_to_all %{{.*}} over ["ep"] of @mesh stream "ep" {piper_plan.comm = 0 : i64}
// CHECK:         piper.collective "from_experts" all_to_all %{{.*}} over ["ep"] of @mesh stream "ep" {piper_plan.comm = 0 : i64}
// CHECK-LABEL: func.func private @unused(
// CHECK:         piper.collective "unused" all_to_all %{{.*}} over ["ep"] of @mesh stream "other" :
// CHECK-NOT:     piper_plan.comm
// CHECK-LABEL: piper.program @body.all
piper.mesh @mesh axes = [ep = 2]
func.func @body(%x: tensor<2x2x3xf64>) {
  return
}
func.func private @experts(%x: tensor<2x2x3xf64>) -> tensor<2x2x3xf64> {
  %in = piper.collective "to_experts" all_to_all %x over ["ep"] of @mesh stream "ep" : tensor<2x2x3xf64>
  %out = piper.collective "from_experts" all_to_all %in over ["ep"] of @mesh stream "ep" : tensor<2x2x3xf64>
  return %out : tensor<2x2x3xf64>
}
func.func private @unused(%x: tensor<2x2x3xf64>) -> tensor<2x2x3xf64> {
  %y = piper.collective "unused" all_to_all %x over ["ep"] of @mesh stream "other" : tensor<2x2x3xf64>
  return %y : tensor<2x2x3xf64>
}
piper.program @body.all role {} of @mesh step @body streams ["compute", "ep"] {
  %x = piper.input 0 : tensor<2x2x3xf64>
  %y = piper.launch "F0" @experts(%x) on "compute" : (tensor<2x2x3xf64>) -> tensor<2x2x3xf64>
  %z = piper.launch "F1" @experts(%y) on "compute" : (tensor<2x2x3xf64>) -> tensor<2x2x3xf64>
}

// -----

// Programs without collectives: empty lists.
// CHECK-LABEL: module attributes
// CHECK-SAME:    piper_plan.batch_axes = []
// CHECK-SAME:    piper_plan.communicators = []
// CHECK-LABEL: piper.program @serial.all
piper.mesh @mesh axes = [dp = 1]
func.func @serial(%x: tensor<4xf32>) {
  return
}
piper.program @serial.all role {} of @mesh step @serial streams ["compute"] {
  %x = piper.input 0 : tensor<4xf32>
}
