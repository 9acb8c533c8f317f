// RUN: not piper-opt %s --piper-comm-report 2>&1 | FileCheck %s
// The report needs valid IR: a collective over an unknown mesh is rejected
// by the verifier before anything is counted.

// CHECK: error: 'piper.collective' op unknown mesh @nowhere
// CHECK-NOT: communication per device
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.collective "ar" all_reduce %x over ["dp"] of @nowhere stream "s" : tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
