// RUN: not piper-opt %s --piper-print-summary 2>&1 | FileCheck %s
// An invalid model is rejected by the verifier before anything is printed.

// CHECK-NOT: mesh @m:
// CHECK: print-summary-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: argument #0 placement: axis 'tp' of @m has size 4; dim 0 (size 6) is not divisible by it
// CHECK-NOT: function @f
piper.mesh @m axes = [tp = 4]
func.func private @f(tensor<6xf32> {piper.placement = #piper.placement<@m, [{tp}]>})
