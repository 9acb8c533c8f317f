// RUN: piper-opt %s -split-input-file --piper-stamp-peer-roles -verify-diagnostics
// What --piper-stamp-peer-roles rejects, with exact diagnostics.

// The peer's role names ep, which the receiver's role does not: both ep
// replicas of @shared.pp1 would receive from the one sender device.
piper.mesh @mesh axes = [pp = 2, ep = 2]
func.func @shared(%x: tensor<4xf32>) {
  return
}
piper.program @shared.pp0_ep1 role {pp = 0, ep = 1} of @mesh step @shared streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  piper.send "x" %x to @shared.pp1 tag 0 on "pp" : tensor<4xf32>
}
piper.program @shared.pp1 role {pp = 1} of @mesh step @shared streams ["pp"] {
  // expected-error@+1 {{'piper.recv' op cannot stamp the role of peer @shared.pp0_ep1 ({ep = 1 : i64, pp = 0 : i64}): it names axis 'ep', which the role of @shared.pp1 ({pp = 1 : i64}) does not, so every replica along it would reach the same peer device}}
  %x = piper.recv "x" from @shared.pp0_ep1 tag 0 on "pp" : tensor<4xf32>
}

// -----

// Two programs with one role: the role does not locate the peer.
piper.mesh @mesh axes = [pp = 2]
func.func @twins(%x: tensor<4xf32>) {
  return
}
piper.program @twins.a role {pp = 0} of @mesh step @twins streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{'piper.send' op cannot stamp the role of peer @twins.b ({pp = 0 : i64}): it agrees with the role of @twins.a ({pp = 0 : i64}) on every axis it names, so the peer device would be the sender itself}}
  piper.send "x" %x to @twins.b tag 0 on "pp" : tensor<4xf32>
}
piper.program @twins.b role {pp = 0} of @mesh step @twins streams ["pp"] {
  %x = piper.recv "x" from @twins.a tag 0 on "pp" : tensor<4xf32>
}

// -----

// The peer names fewer axes and agrees on them: every device of the
// sender's role would send to itself.
piper.mesh @mesh axes = [pp = 2, ep = 2]
func.func @self(%x: tensor<4xf32>) {
  return
}
piper.program @self.pp0_ep1 role {pp = 0, ep = 1} of @mesh step @self streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{'piper.send' op cannot stamp the role of peer @self.pp0 ({pp = 0 : i64}): it agrees with the role of @self.pp0_ep1 ({ep = 1 : i64, pp = 0 : i64}) on every axis it names, so the peer device would be the sender itself}}
  piper.send "x" %x to @self.pp0 tag 0 on "pp" : tensor<4xf32>
}
piper.program @self.pp0 role {pp = 0} of @mesh step @self streams ["pp"] {
}
