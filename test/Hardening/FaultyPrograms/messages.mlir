// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted point-to-point faults: a message whose two ends disagree would
// corrupt memory or hang at run time.

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// The two ends agree on the shape but not on the element type: 16 bytes
// sent into an 8-byte buffer.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{send 'x' (to @b, tag 0) of @a {pp=0} sends 'tensor<4xf32>', but recv 'x' (from @a, tag 0) of @b {pp=1} receives 'tensor<4xbf16>'}}
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{the recv}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xbf16>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// The same element count in another shape is still a mismatch: the
// receiver would read a 2x2 tile of a vector.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{send 'x' (to @b, tag 0) of @a {pp=0} sends 'tensor<4xf32>', but recv 'x' (from @a, tag 0) of @b {pp=1} receives 'tensor<2x2xf32>'}}
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{the recv}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<2x2xf32>
}

// -----

piper.mesh @mesh axes = [pp = 3]
func.func @step(%x: tensor<4xf32>) {
  return
}

// A message addressed to the wrong stage: @c expects it, @b is sent it.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{send 'x' (to @b, tag 0) of @a {pp=0} has no matching recv in @b {pp=1}}}
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
}
piper.program @c role {pp = 2} of @mesh step @step streams ["pp"] {
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Two receives of one tag: the second would take a later step's message.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{the other recv}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
  // expected-error@+1 {{@b {pp=1} receives twice from @a with tag 0}}
  %y = piper.recv "x again" from @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// The tags are crossed: each side's message has a partner-less tag.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{send 'x' (to @b, tag 7) of @a {pp=0} has no matching recv in @b {pp=1}}}
  piper.send "x" %x to @b tag 7 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %x = piper.recv "x" from @a tag 8 on "pp" : tensor<4xf32>
}
