//===- PlanABIHeaderTest.c - The plan ABI from C --------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiled as C, as a plan's callers are: if plan_abi.h stopped being valid C
// or lost its extern "C" guards, this file or the link of PiperPlanTests
// would fail. Takes the address of every Part 1 symbol, so that each must be
// defined, with C linkage, in PiperPlanRuntime.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi.h"

/// The number of Part 1 symbols (PlanSessionTest checks it).
int piperPlanTestCountSymbols(void) {
  void (*const functions[])(void) = {
      (void (*)(void))_mlir_memref_to_llvm_alloc,
      (void (*)(void))_mlir_memref_to_llvm_aligned_alloc,
      (void (*)(void))_mlir_memref_to_llvm_free,
      (void (*)(void))piper_trace_begin,
      (void (*)(void))piper_trace_end,
      (void (*)(void))piper_trace_kernel_begin,
      (void (*)(void))piper_trace_kernel_end,
      (void (*)(void))piper_comm_send_f32,
      (void (*)(void))piper_comm_send_f64,
      (void (*)(void))piper_comm_send_i64,
      (void (*)(void))piper_comm_recv_f32,
      (void (*)(void))piper_comm_recv_f64,
      (void (*)(void))piper_comm_recv_i64,
      (void (*)(void))piper_comm_irecv_f32,
      (void (*)(void))piper_comm_irecv_f64,
      (void (*)(void))piper_comm_irecv_i64,
      (void (*)(void))piper_comm_iall_reduce_f32,
      (void (*)(void))piper_comm_iall_reduce_f64,
      (void (*)(void))piper_comm_ireduce_scatter_f32,
      (void (*)(void))piper_comm_ireduce_scatter_f64,
      (void (*)(void))piper_comm_iall_gather_f32,
      (void (*)(void))piper_comm_iall_gather_f64,
      (void (*)(void))piper_comm_all_reduce_f32,
      (void (*)(void))piper_comm_all_reduce_f64,
      (void (*)(void))piper_comm_all_to_all_f32,
      (void (*)(void))piper_comm_all_to_all_f64,
      (void (*)(void))piper_comm_shard_f32,
      (void (*)(void))piper_comm_shard_f64,
      (void (*)(void))piper_comm_record,
      (void (*)(void))piper_comm_wait,
      (void (*)(void))piper_comm_sync_all,
  };
  int n = 0;
  for (unsigned i = 0; i < sizeof(functions) / sizeof(functions[0]); ++i)
    n += functions[i] != 0;
  return n;
}
