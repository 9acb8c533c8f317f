// MLIR 22's parser segfaults on a dense array of `index` elements
// (fuzz/crashes-upstream/dense-array-index.mlir; docs/Limits.md, "MLIR
// parser crashes"). piper-compile, piper-interp and piper-opt look for it before they
// parse (include/piper/ParserGuards.h) and stop with one located line; the
// same text in a comment or a string is not mistaken for it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: sed 's/^module {/module attributes {test.a = array<index: 1>} {/' %t/mlp.mlir > %t/crash.mlir
// RUN: not piper-compile %t/crash.mlir -o %t/p 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: not piper-interp %t/crash.mlir 2>&1 | FileCheck %s --check-prefix=INTERP
// COMPILE: crash.mlir:1:29: error: a dense array of 'index' elements crashes MLIR 22's parser; use an integer element type such as i64 (array<i64: ...>)
// COMPILE-NOT: Stack dump
// INTERP: crash.mlir:1:29: error: a dense array of 'index' elements crashes MLIR 22's parser; use an integer element type such as i64 (array<i64: ...>)
// INTERP-NOT: Stack dump
// RUN: sed 's/^module {/module attributes {test.a = array < index >} {/' %t/mlp.mlir > %t/spaced.mlir
// RUN: not piper-compile %t/spaced.mlir -o %t/p 2>&1 | FileCheck %s --check-prefix=SPACED
// SPACED: spaced.mlir:1:29: error: a dense array of 'index' elements crashes
// RUN: { echo '// array<index: 1> in a comment'; sed 's/^module {/module attributes {test.s = "array<index: 1>"} {/' %t/mlp.mlir; } > %t/quoted.mlir
// RUN: piper-compile %t/quoted.mlir --emit=programs -o /dev/null
// piper-opt checks its input before MLIR's driver parses it.
// RUN: not piper-opt %t/crash.mlir 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: crash.mlir:1:29: error: a dense array of 'index' elements crashes MLIR 22's parser; use an integer element type such as i64 (array<i64: ...>)
// OPT-NOT: Stack dump
// RUN: piper-opt %t/quoted.mlir -o /dev/null
