// RUN: piper-opt %s -split-input-file --piper-stamp-peer-roles | FileCheck %s --enable-var-scope
// RUN: piper-opt %s -split-input-file --piper-stamp-peer-roles --piper-stamp-peer-roles | FileCheck %s --enable-var-scope
// --piper-stamp-peer-roles copies each send's and receive's peer role onto
// it (piper_plan.peer_role), so that the program can be lowered alone;
// running it twice stamps the same roles.

// Two pipeline stages exchange an activation and its gradient: each side
// carries the other's role.
// CHECK-LABEL: piper.program @pipe.pp0
// CHECK:         piper.send "act" %[[X:.*]] to @pipe.pp1 tag 0 on "pp" {piper_plan.peer_role = {pp = 1 : i64}} : tensor<4xf32>
// CHECK:         piper.recv "grad" from @pipe.pp1 tag 0 on "pp" {piper_plan.peer_role = {pp = 1 : i64}} : tensor<4xf32>
// CHECK-LABEL: piper.program @pipe.pp1
// CHECK:         piper.recv "act" from @pipe.pp0 tag 0 on "pp" {piper_plan.peer_role = {pp = 0 : i64}} : tensor<4xf32>
// CHECK:         piper.send "grad" %{{.*}} to @pipe.pp0 tag 0 on "pp" {piper_plan.peer_role = {pp = 0 : i64}} : tensor<4xf32>
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @pipe(%x: tensor<4xf32>) {
  return
}
piper.program @pipe.pp0 role {pp = 0} of @mesh step @pipe streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  piper.send "act" %x to @pipe.pp1 tag 0 on "pp" : tensor<4xf32>
  %g = piper.recv "grad" from @pipe.pp1 tag 0 on "pp" : tensor<4xf32>
}
piper.program @pipe.pp1 role {pp = 1} of @mesh step @pipe streams ["pp"] {
  %x = piper.recv "act" from @pipe.pp0 tag 0 on "pp" : tensor<4xf32>
  piper.send "grad" %x to @pipe.pp0 tag 0 on "pp" : tensor<4xf32>
}

// -----

// Roles over two axes: a stage talks to the next stage of its own expert
// replica and to the other expert replica of its stage. Ops other than
// sends and receives are left alone.
// CHECK-LABEL: piper.program @roles.pp0_ep1
// CHECK:         %[[X:.*]] = piper.input 0 : tensor<4xf32>
// CHECK-NEXT:    piper.send "to_pp1" %[[X]] to @roles.pp1_ep1 tag 3 on "pp" {piper_plan.peer_role = {ep = 1 : i64, pp = 1 : i64}} : tensor<4xf32>
// CHECK-NEXT:    piper.send "to_ep0" %[[X]] to @roles.pp0_ep0 tag 0 on "ep" {piper_plan.peer_role = {ep = 0 : i64, pp = 0 : i64}} : tensor<4xf32>
// CHECK-LABEL: piper.program @roles.pp0_ep0
// CHECK:         piper.recv "to_ep0" from @roles.pp0_ep1 tag 0 on "ep" {piper_plan.peer_role = {ep = 1 : i64, pp = 0 : i64}} : tensor<4xf32>
// CHECK-LABEL: piper.program @roles.pp1_ep1
// CHECK:         piper.recv "to_pp1" from @roles.pp0_ep1 tag 3 on "pp" {piper_plan.peer_role = {ep = 1 : i64, pp = 0 : i64}} : tensor<4xf32>
piper.mesh @mesh axes = [pp = 2, ep = 2]
func.func @roles(%x: tensor<4xf32>) {
  return
}
piper.program @roles.pp0_ep1 role {pp = 0, ep = 1} of @mesh step @roles streams ["pp", "ep"] {
  %x = piper.input 0 : tensor<4xf32>
  piper.send "to_pp1" %x to @roles.pp1_ep1 tag 3 on "pp" : tensor<4xf32>
  piper.send "to_ep0" %x to @roles.pp0_ep0 tag 0 on "ep" : tensor<4xf32>
}
piper.program @roles.pp0_ep0 role {pp = 0, ep = 0} of @mesh step @roles streams ["ep"] {
  %x = piper.recv "to_ep0" from @roles.pp0_ep1 tag 0 on "ep" : tensor<4xf32>
}
piper.program @roles.pp1_ep1 role {pp = 1, ep = 1} of @mesh step @roles streams ["pp"] {
  %x = piper.recv "to_pp1" from @roles.pp0_ep1 tag 3 on "pp" : tensor<4xf32>
}

// -----

// A stale stamp (from a module whose roles changed since) is replaced.
// CHECK-LABEL: piper.program @stale.pp0
// CHECK:         piper.send "x" %{{.*}} to @stale.pp1 tag 0 on "pp" {piper_plan.peer_role = {pp = 1 : i64}} : tensor<4xf32>
piper.mesh @mesh axes = [pp = 2]
func.func @stale(%x: tensor<4xf32>) {
  return
}
piper.program @stale.pp0 role {pp = 0} of @mesh step @stale streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  piper.send "x" %x to @stale.pp1 tag 0 on "pp" {piper_plan.peer_role = {pp = 0 : i64}} : tensor<4xf32>
}
piper.program @stale.pp1 role {pp = 1} of @mesh step @stale streams ["pp"] {
  %x = piper.recv "x" from @stale.pp0 tag 0 on "pp" : tensor<4xf32>
}
