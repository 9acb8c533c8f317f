// RUN: not piper-opt %s 2>&1 | FileCheck %s
// RUN: not piper-opt %t.does-not-exist 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not piper-opt %s --piper-no-such-pass 2>&1 | FileCheck %s --check-prefix=FLAG
// Bad input gives a located error and a non-zero exit, never a crash.

// CHECK: piper-opt-bad-input.mlir:[[# @LINE + 2]]:32: error: custom op 'piper.mesh' unknown link class 'warp'; expected nvlink, pcie, infiniband, roce, efa or ethernet
// MISSING: cannot open input file '{{.*}}does-not-exist': No such file or directory
piper.mesh @m axes = [dp = 2 : warp]
// FLAG: Unknown command line argument '--piper-no-such-pass'
