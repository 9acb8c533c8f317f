// The linalg kernels of the norms, softmax, cross-entropy and embedding
// (and every one of their VJPs, at rows of 16 and 24 and a 32-row table)
// train like the interpreter: a model that uses them all, layernorm and
// softmax included (the generated models use neither), over 5 AdamW steps,
// every loss and every final parameter against piper-interp: f64 to 1e-9
// (measured 1.2e-16 / 5.6e-15), f32 against its f32 mode to 1e-5 (7.1e-8 /
// 2.1e-6; the compiled kernels compute in f32, the interpreter in f64
// rounded once per op). The plan calls no kernel of these ops.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-compile %s --emit=kernels | FileCheck %s
// RUN: piper-compile %s -o %t/f64.plan
// RUN: piper-run %t/f64.plan --steps=5 --params-out=%t/f64.run.params > %t/f64.run.txt
// RUN: piper-interp %s --steps=5 --optimizer=adamw --params-out=%t/f64.interp.params > %t/f64.interp.txt
// RUN: %numdiff %t/f64.interp.txt %t/f64.run.txt
// RUN: %numdiff %t/f64.interp.params %t/f64.run.params
// RUN: sed -e 's/xf64>/xf32>/g' -e 's/tensor<f64>/tensor<f32>/g' %s > %t/f32.mlir
// RUN: piper-compile %t/f32.mlir -o %t/f32.plan
// RUN: piper-run %t/f32.plan --steps=5 --params-out=%t/f32.run.params > %t/f32.run.txt
// RUN: piper-interp %t/f32.mlir --steps=5 --optimizer=adamw --precision=f32 --params-out=%t/f32.interp.params > %t/f32.interp.txt
// RUN: %numdiff --rel 1e-5 %t/f32.interp.txt %t/f32.run.txt
// RUN: %numdiff --rel 1e-5 %t/f32.interp.params %t/f32.run.params

// CHECK-NOT: piper_k_{{(vjp_)?(softmax|rmsnorm|layernorm|embedding|cross_entropy)}}
// CHECK:     scf.for
// CHECK-NOT: piper_k_{{(vjp_)?(softmax|rmsnorm|layernorm|embedding|cross_entropy)}}

module {
  piper.mesh @mesh axes = [dp = 1]
  func.func @step(%embed: tensor<32x16xf64> {piper.param = #piper.param<"embed", normal(0.02), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}>>},
                  %ln.w: tensor<16xf64> {piper.param = #piper.param<"ln.w", ones, placement = #piper.placement<@mesh, [{}], replicated = {dp}>>},
                  %ln.b: tensor<16xf64> {piper.param = #piper.param<"ln.b", normal(0.02), placement = #piper.placement<@mesh, [{}], replicated = {dp}>>},
                  %w1: tensor<16x24xf64> {piper.param = #piper.param<"w1", normal(0.3), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}>>},
                  %w2: tensor<24x16xf64> {piper.param = #piper.param<"w2", normal(0.3), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}>>},
                  %rms.w: tensor<16xf64> {piper.param = #piper.param<"rms.w", ones, placement = #piper.placement<@mesh, [{}], replicated = {dp}>>},
                  %head: tensor<16x32xf64> {piper.param = #piper.param<"head", normal(0.1), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}>>},
                  %ids: tensor<2x8xi64>, %labels: tensor<16xi64>) -> tensor<f64> {
    %s = piper.annotate {PP = 0} -> tensor<f64> {
      %e = piper.embedding %embed, %ids : tensor<32x16xf64>, tensor<2x8xi64> -> tensor<2x8x16xf64>
      %n = piper.layernorm %e, %ln.w, %ln.b {epsilon = 1.0e-03 : f64} : tensor<2x8x16xf64>, tensor<16xf64>, tensor<16xf64> -> tensor<2x8x16xf64>
      %r = piper.reshape %n : tensor<2x8x16xf64> -> tensor<16x16xf64>
      %h = piper.linear %r, %w1 : tensor<16x16xf64>, tensor<16x24xf64> -> tensor<16x24xf64>
      %p = piper.softmax %h : tensor<16x24xf64>
      %o = piper.linear %p, %w2 : tensor<16x24xf64>, tensor<24x16xf64> -> tensor<16x16xf64>
      %a = piper.add %r, %o : tensor<16x16xf64>
      %m = piper.rmsnorm %a, %rms.w : tensor<16x16xf64>, tensor<16xf64> -> tensor<16x16xf64>
      %l = piper.linear %m, %head : tensor<16x16xf64>, tensor<16x32xf64> -> tensor<16x32xf64>
      %loss = piper.cross_entropy %l, %labels : tensor<16x32xf64>, tensor<16xi64> -> tensor<f64>
      piper.yield %loss : tensor<f64>
    }
    return %s : tensor<f64>
  }
}
