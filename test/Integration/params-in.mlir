// --params-in=FILE of piper-interp and piper-run: every parameter starts from
// the values in FILE (the format --params-out writes; python/piper exports a
// PyTorch module's weights so) instead of its seeded initialiser. Parameters
// trained one step and written out, then read back, give both tools the same
// step-1 loss, which differs from the seeded start's; a bad file fails with
// one line naming it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-interp %s --optimizer=adamw --steps=1 --params-out=%t/trained.params > %t/seeded.txt
// RUN: piper-interp %s --optimizer=adamw --steps=2 --params-in=%t/trained.params > %t/interp.txt
// RUN: piper-compile %s -o %t/plan
// RUN: piper-run %t/plan --steps=2 --params-in=%t/trained.params > %t/run.txt
// RUN: %numdiff %t/interp.txt %t/run.txt
// RUN: not diff %t/seeded.txt %t/interp.txt > /dev/null
// RUN: FileCheck %s --input-file=%t/run.txt
// CHECK: step 1 loss
// CHECK: step 2 loss

// RUN: head -1 %t/trained.params > %t/missing.params
// RUN: not piper-interp %s --params-in=%t/missing.params 2>&1 | FileCheck %s --check-prefix=MISS-INTERP
// RUN: not piper-run %t/plan --params-in=%t/missing.params 2>&1 | FileCheck %s --check-prefix=MISS-EXEC
// MISS-INTERP: error: piper-interp: the parameter file '{{.*}}missing.params' has no values for parameter 'w2'
// MISS-EXEC: piper-run: the parameter file '{{.*}}missing.params' has no values for parameter 'w2'

// RUN: (cat %t/trained.params; echo 'w3 1 2') > %t/extra.params
// RUN: not piper-run %t/plan --params-in=%t/extra.params 2>&1 | FileCheck %s --check-prefix=EXTRA
// RUN: not piper-interp %s --params-in=%t/extra.params 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: the parameter file '{{.*}}extra.params' has values for 'w3', which is not a parameter of the model

// RUN: (echo 'w1 1 2 3'; tail -1 %t/trained.params) > %t/short.params
// RUN: not piper-run %t/plan --params-in=%t/short.params 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: piper-run: the parameter file '{{.*}}short.params' has 3 values for parameter 'w1' of shape [4, 8] (32 elements)

// RUN: (cat %t/trained.params; echo 'w2 0.5 x') > %t/twice.params
// RUN: not piper-run %t/plan --params-in=%t/twice.params 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: (cat %t/trained.params; tail -1 %t/trained.params) > %t/twice.params
// RUN: not piper-interp %s --params-in=%t/twice.params 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not piper-run %t/plan --params-in=%t/nowhere.params 2>&1 | FileCheck %s --check-prefix=NOFILE
// NAN: piper-run: {{.*}}twice.params:3: parameter 'w2' has the value 'x', which is not a number
// TWICE: piper-interp: {{.*}}twice.params:3: parameter 'w2' is given twice
// NOFILE: piper-run: cannot read the parameter file '{{.*}}nowhere.params'

piper.mesh @mesh axes = [dp = 1]
func.func @step(%w1: tensor<4x8xf64> {piper.param = #piper.param<"w1", normal(0.5)>},
                %w2: tensor<8x8xf64> {piper.param = #piper.param<"w2", normal(0.5)>},
                %x: tensor<2x4xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %loss = piper.annotate {PP = 0} -> tensor<f64> {
    %a = piper.linear %x, %w1 : tensor<2x4xf64>, tensor<4x8xf64> -> tensor<2x8xf64>
    %r = piper.gelu %a : tensor<2x8xf64>
    %o = piper.linear %r, %w2 : tensor<2x8xf64>, tensor<8x8xf64> -> tensor<2x8xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x8xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}
