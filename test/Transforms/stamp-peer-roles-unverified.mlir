// RUN: piper-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --piper-stamp-peer-roles -verify-diagnostics
// The op verifiers reject a peer that is not a program before any pass
// runs; with them skipped on parsing, --piper-stamp-peer-roles reports it
// itself instead of crashing.

piper.mesh @mesh axes = [pp = 2]
func.func @not_program(%x: tensor<4xf32>) {
  return
}
piper.program @not_program.pp0 role {pp = 0} of @mesh step @not_program streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{'piper.send' op peer @not_program is not a piper.program of the module}}
  piper.send "x" %x to @not_program tag 0 on "pp" : tensor<4xf32>
}
