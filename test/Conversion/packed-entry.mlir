// --piper-packed-entry: every lowered program (an llvm.func carrying
// piper_plan.inputs) gets `void piper_entry_<program>(void **args)` that
// loads one descriptor pointer per argument of its C-interface wrapper and
// calls it; the wrapper itself and other functions get none. A program
// without a wrapper is an error.
// RUN: piper-opt %s -split-input-file --piper-packed-entry -verify-diagnostics | FileCheck %s --enable-var-scope

// CHECK-LABEL: llvm.func @piper_entry_p(
// CHECK-SAME:   %[[ARGS:.*]]: !llvm.ptr) {
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %[[D0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %[[D1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   llvm.call @_mlir_ciface_p(%[[D0]], %[[D1]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NOT:  llvm.func @piper_entry_
module @program_gets_an_entry {
  llvm.func @p(%a: !llvm.ptr, %r: !llvm.ptr) attributes {piper_plan.inputs = array<i64: 0>} {
    llvm.return
  }
  llvm.func @_mlir_ciface_p(%a: !llvm.ptr, %r: !llvm.ptr) attributes {piper_plan.inputs = array<i64: 0>} {
    llvm.call @p(%a, %r) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @helper() {
    llvm.return
  }
}

// -----

// Without `llvm.emit_c_interface` there is no wrapper to call.
module @program_without_wrapper_is_rejected {
  // expected-error@+1 {{has no C interface wrapper @_mlir_ciface_q}}
  llvm.func @q() attributes {piper_plan.inputs = array<i64>} {
    llvm.return
  }
}
