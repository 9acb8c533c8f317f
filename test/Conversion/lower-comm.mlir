// Sends and receives lower to the piper_comm_* shims piper-run exports:
// (unranked memref, peer offset, tag). The offset is the peer's world rank
// minus the sender's, row-major over the mesh [x = 1, pp = 2]: +1 from
// @step.pp0 to @step.pp1, -1 back. A sent microbatch slice goes out with any
// strides; a receive fills a fresh buffer. The value is only returned, so
// the receive is nonblocking (its last operand: the index of its stream) and
// piper_comm_sync_all completes it before the return (IssueOrder.h).
// RUN: piper-compile %s --emit=kernels | FileCheck %s
// RUN: piper-compile %s --emit=lowered | FileCheck %s --check-prefix=LLVM

piper.mesh @mesh axes = [x = 1, pp = 2]
func.func @step(%x: tensor<4xf64>) -> tensor<2xf64> {
  %y = tensor.extract_slice %x[0] [2] [1] : tensor<4xf64> to tensor<2xf64>
  return %y : tensor<2xf64>
}
piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 microbatch 1 of 2 along 0 : tensor<2xf64>
  piper.send "x" %x to @step.pp1 tag 3 on "pp" : tensor<2xf64>
}
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["pp"] {
  %x = piper.recv "x" from @step.pp0 tag 3 on "pp" : tensor<2xf64>
  piper.output 0 %x : tensor<2xf64>
}

// CHECK-LABEL: func.func @step.pp0(
// CHECK:         %[[S:.*]] = tensor.extract_slice %{{.*}}[2] [2] [1]
// CHECK-DAG:     %[[P1:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[T3:.*]] = arith.constant 3 : i64
// CHECK:         %[[B:.*]] = bufferization.to_buffer %[[S]] read_only : tensor<2xf64> to memref<2xf64, strided<[?], offset: ?>>
// CHECK:         %[[U:.*]] = memref.cast %[[B]] : memref<2xf64, strided<[?], offset: ?>> to memref<*xf64>
// CHECK:         call @piper_comm_send_f64(%[[U]], %[[P1]], %[[T3]]) : (memref<*xf64>, i64, i64) -> ()
// CHECK:       func.func private @piper_comm_send_f64(memref<*xf64>, i64, i64)
// CHECK-LABEL: func.func @step.pp1(
// CHECK:         %[[P0:.*]] = arith.constant -1 : i64
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2xf64>
// CHECK:         %[[U2:.*]] = memref.cast %[[A]] : memref<2xf64> to memref<*xf64>
// CHECK:         call @piper_comm_irecv_f64(%[[U2]], %[[P0]], %{{.*}}, %{{.*}}) : (memref<*xf64>, i64, i64, i64) -> ()
// CHECK:         bufferization.to_tensor %[[A]] restrict writable
// CHECK:         call @piper_comm_sync_all()
// CHECK:       func.func private @piper_comm_irecv_f64(memref<*xf64>, i64, i64, i64)

// LLVM: llvm.func @piper_comm_send_f64(i64, !llvm.ptr, i64, i64)
// LLVM: llvm.func @piper_comm_irecv_f64(i64, !llvm.ptr, i64, i64, i64)

