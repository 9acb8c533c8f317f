// RUN: piper-opt --version | FileCheck %s
// --version names both Piper's and LLVM's versions.

// CHECK: LLVM version 22.
// CHECK: Piper version {{[0-9]+\.[0-9]+\.[0-9]+}} (built with LLVM 22.{{[0-9.]+}})
