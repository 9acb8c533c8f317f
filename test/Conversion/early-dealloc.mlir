// RUN: piper-opt %s --split-input-file --piper-early-dealloc | FileCheck %s --enable-var-scope

// A buffer is freed right after its last use (through a cast), not at the
// end of the block where the deallocation pipeline put it.
// CHECK-LABEL: func.func @freed_after_last_use
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: %[[C:.*]] = memref.cast %[[A]]
// CHECK-NEXT: call @use(%[[C]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: call @other()
func.func private @use(memref<*xf64>)
func.func private @other()
func.func @freed_after_last_use() {
  %a = memref.alloc() : memref<4xf64>
  %c = memref.cast %a : memref<4xf64> to memref<*xf64>
  call @use(%c) : (memref<*xf64>) -> ()
  call @other() : () -> ()
  memref.dealloc %a : memref<4xf64>
  return
}

// -----

// The output of a nonblocking collective stays live until a reader (which
// waits for it); its input may go right after the call (copied out at once).
// CHECK-LABEL: func.func @pending_output
// CHECK: %[[IN:.*]] = memref.alloc()
// CHECK: %[[OUT:.*]] = memref.alloc()
// CHECK: call @piper_comm_iall_gather_f64(%[[IN]], %[[OUT]], %{{.*}})
// CHECK-NEXT: memref.dealloc %[[IN]]
// CHECK-NEXT: call @piper_comm_wait
// CHECK-NEXT: call @read(%[[OUT]])
// CHECK-NEXT: memref.dealloc %[[OUT]]
// CHECK-NEXT: call @other()
func.func private @piper_comm_iall_gather_f64(memref<2xf64>, memref<4xf64>, i64)
func.func private @piper_comm_wait(i64, i64)
func.func private @read(memref<4xf64>)
func.func private @other()
func.func @pending_output(%e: i64) {
  %in = memref.alloc() : memref<2xf64>
  %out = memref.alloc() : memref<4xf64>
  call @piper_comm_iall_gather_f64(%in, %out, %e) : (memref<2xf64>, memref<4xf64>, i64) -> ()
  call @piper_comm_wait(%e, %e) : (i64, i64) -> ()
  call @read(%out) : (memref<4xf64>) -> ()
  call @other() : () -> ()
  memref.dealloc %in : memref<2xf64>
  memref.dealloc %out : memref<4xf64>
  return
}

// -----

// An output no one reads after the collective stays to the end of the
// block: nothing waits for the runtime's write before it.
// CHECK-LABEL: func.func @unread_output_stays
// CHECK: call @piper_comm_iall_gather_f64
// CHECK-NEXT: call @other()
// CHECK-NEXT: memref.dealloc
func.func private @piper_comm_iall_gather_f64(memref<2xf64>, memref<4xf64>, i64)
func.func private @other()
func.func @unread_output_stays(%in: memref<2xf64>, %e: i64) {
  %out = memref.alloc() : memref<4xf64>
  call @piper_comm_iall_gather_f64(%in, %out, %e) : (memref<2xf64>, memref<4xf64>, i64) -> ()
  call @other() : () -> ()
  memref.dealloc %out : memref<4xf64>
  return
}

// -----

// A buffer used in another block (here yielded by an scf.if) keeps its
// dealloc where it was.
// CHECK-LABEL: func.func @yielded_stays
// CHECK: scf.if
// CHECK: call @other()
// CHECK-NEXT: memref.dealloc
func.func private @other()
func.func @yielded_stays(%p: i1) {
  %a = memref.alloc() : memref<4xf64>
  %r = scf.if %p -> memref<4xf64> {
    scf.yield %a : memref<4xf64>
  } else {
    scf.yield %a : memref<4xf64>
  }
  call @other() : () -> ()
  memref.dealloc %a : memref<4xf64>
  return
}
