// --piper-bare-ptr-calls: a function with a body, only ever called, whose
// every memref has a static shape, strides and offset, takes bare pointers
// (llvm.bareptr); everything else keeps the descriptor ABI. The second RUN
// line shows what func-to-llvm then makes of it: one pointer per buffer at
// the function and at its call.
// RUN: piper-opt %s -split-input-file --piper-bare-ptr-calls | FileCheck %s
// RUN: piper-opt %s -split-input-file --piper-bare-ptr-calls | mlir-opt -split-input-file --convert-func-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @chunk(
// CHECK-SAME:    attributes {llvm.bareptr}
// CHECK-LABEL: func.func @program(
// CHECK-SAME:    attributes {llvm.emit_c_interface}
// LLVM-LABEL: llvm.func @chunk(
// LLVM-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// LLVM-LABEL: llvm.func @program(
// LLVM:         llvm.call @chunk(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
func.func @chunk(%a: memref<4x8xf32>, %b: memref<8xf32>, %n: index) {
  return
}
func.func @program(%a: memref<4x8xf32>, %b: memref<8xf32>) attributes {llvm.emit_c_interface} {
  %c1 = arith.constant 1 : index
  call @chunk(%a, %b, %c1) : (memref<4x8xf32>, memref<8xf32>, index) -> ()
  return
}

// -----

// A dynamic size and a dynamic offset need their descriptors.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT:     llvm.bareptr
// CHECK-LABEL: func.func @dynamic_offset(
// CHECK-NOT:     llvm.bareptr
// CHECK-LABEL: func.func @caller(
func.func @dynamic(%a: memref<?xf32>) {
  return
}
func.func @dynamic_offset(%a: memref<4xf32, strided<[1], offset: ?>>) {
  return
}
func.func @caller(%a: memref<?xf32>, %b: memref<4xf32, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface} {
  call @dynamic(%a) : (memref<?xf32>) -> ()
  call @dynamic_offset(%b) : (memref<4xf32, strided<[1], offset: ?>>) -> ()
  return
}

// -----

// A declaration is the runtime's ABI; a function never called, or whose
// symbol is used other than by a call, may be reached through the other ABI.
// CHECK-LABEL: func.func private @runtime_kernel(
// CHECK-NOT:     llvm.bareptr
// CHECK-LABEL: func.func @uncalled(
// CHECK-NOT:     llvm.bareptr
// CHECK-LABEL: func.func @referenced(
// CHECK-NOT:     llvm.bareptr
// CHECK-LABEL: func.func @user(
func.func private @runtime_kernel(memref<4xf32>)
func.func @uncalled(%a: memref<4xf32>) {
  return
}
func.func @referenced(%a: memref<4xf32>) {
  return
}
func.func @user(%a: memref<4xf32>) attributes {llvm.emit_c_interface} {
  call @runtime_kernel(%a) : (memref<4xf32>) -> ()
  call @referenced(%a) : (memref<4xf32>) -> ()
  %f = func.constant @referenced : (memref<4xf32>) -> ()
  return
}
