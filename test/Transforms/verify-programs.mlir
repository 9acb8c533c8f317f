// RUN: piper-opt %s --piper-verify-programs | FileCheck %s
// Programs that --piper-verify-programs accepts and leaves unchanged: a
// send/recv pair whose receiver computes on another stream behind an event,
// and an all-reduce over the role axis pp that both programs issue in the
// same order, after sends that the receiver takes in the opposite stream
// order of a naive pairing (different streams do not block each other).

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}
func.func private @f(tensor<4xf32>) -> tensor<4xf32>

// CHECK: piper.program @a
piper.program @a role {pp = 0} of @mesh step @step streams ["compute", "p", "q", "grad"] {
  %x = piper.input 0 : tensor<4xf32>
  piper.send "u" %x to @b tag 0 on "p" : tensor<4xf32>
  piper.send "v" %x to @b tag 1 on "q" : tensor<4xf32>
  %g = piper.comm "ar" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
  %h = piper.comm "ag" all_gather %g over ["pp", "dp"] on "grad" : tensor<4xf32>
}
// CHECK: piper.program @b
piper.program @b role {pp = 1} of @mesh step @step streams ["compute", "p", "q", "grad"] {
  %v = piper.recv "v" from @a tag 1 on "q" : tensor<4xf32>
  %u = piper.recv "u" from @a tag 0 on "p" : tensor<4xf32>
  piper.record 0 on "p"
  piper.wait 0 on "compute"
  %y = piper.launch "F" @f(%u) on "compute" : (tensor<4xf32>) -> tensor<4xf32>
  %g = piper.comm "ar" all_reduce %v over ["pp"] on "grad" : tensor<4xf32>
  %h = piper.comm "ag" all_gather %g over ["pp", "dp"] on "grad" : tensor<4xf32>
}
