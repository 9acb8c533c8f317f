//===- Planning.h - Device-independent decisions of the CUDA backend -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the CUDA backend decides before it touches a device, kept apart so
// that the unit tests check it without one: how a plan communicator splits
// the NCCL world (color and key), how an overlap's SM shares become green
// context sizes and NCCL CTA limits, how a strided memref view is copied
// with 2-D copies, and how a row-major piper_gpu_gemm maps onto cuBLAS's
// column-major strided-batched GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_CUDA_PLANNING_H
#define PIPER_RT_BACKENDS_CUDA_PLANNING_H

#include "../../lib/Mesh.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace piper::cuda {

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

/// ncclCommSplit's arguments for `rank`'s group along the axes in `mask`:
/// the color is the group's lowest world rank (equal within a group,
/// distinct between groups), the key the rank's index in the group, so that
/// NCCL ranks follow the MPI backend's member order (groupMembers).
struct SplitPlan {
  int color = 0;
  int key = 0;
  std::vector<int64_t> members;
};
SplitPlan splitFor(const piper_rt_mesh_impl &mesh, int64_t rank, uint32_t mask);

//===----------------------------------------------------------------------===//
// SM partitioning
//===----------------------------------------------------------------------===//

/// The SM granularity of green contexts on a device of compute capability
/// `major` (cuDevSmResourceSplitByCount rounds a group up to it): 8 on
/// Hopper and later, 2 before.
int smGranularity(int major);

/// An overlapped pair's SMs: `first` and `second` for the two compute
/// streams (green contexts), the rest for the communication kernels beside
/// them, each share rounded to the nearest whole group. `partitioned` is
/// false, with `why`, when a share rounds to no group or the two to more
/// than the device; then the streams share the whole device.
struct SmPartition {
  int first = 0, second = 0, communication = 0;
  bool partitioned = false;
  std::string why;
};
SmPartition partitionSms(int total, double firstShare, double secondShare,
                         int granularity);

/// NCCL's CTA limits (ncclConfig_t minCTAs/maxCTAs) for communicators that
/// run beside a partition: one CTA per SM left to communication, at least 1
/// and at most NCCL's 64 channels.
struct CtaLimits {
  int minCTAs = 1, maxCTAs = 1;
};
CtaLimits ctaLimits(int communicationSms);

//===----------------------------------------------------------------------===//
// Strided copies
//===----------------------------------------------------------------------===//

/// One cuMemcpy2D: `height` rows of `width` bytes, at byte offsets from the
/// view's first element and from the contiguous side's start.
struct Copy2D {
  int64_t viewOffset = 0, packedOffset = 0;
  size_t width = 0, height = 0;
  int64_t viewPitch = 0, packedPitch = 0;
};
/// The copies that move a strided view (sizes, strides in elements of
/// `elt` bytes) to or from its row-major packing. Adjacent dimensions that
/// are contiguous in each other merge, so a contiguous view is one copy and
/// a 2-D slice one 2-D copy. False with `why` for negative strides.
bool stridedCopies(const int64_t *sizes, const int64_t *strides, int64_t rank,
                   size_t elt, std::vector<Copy2D> &copies, std::string &why);

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

/// A row-major C = alpha op(A) op(B) + beta C is the column-major
/// C^T = op(B)^T op(A)^T: cuBLAS gets B as its first operand, with the
/// row-major transposition flags and leading dimensions unchanged.
struct GemmPlan {
  bool transFirst = false, transSecond = false;
  int64_t m = 0, n = 0, k = 0; // cuBLAS's (n, m, k of the row-major call)
  bool firstIsB = true;
  int64_t ldFirst = 0, strideFirst = 0, ldSecond = 0, strideSecond = 0;
  /// 0 f32, 1 f64, 3 bf16 (piper_rt_dtype values).
  int32_t inputType = 0, outputType = 0;
  bool f64Compute = false;
};
/// Checks piper_gpu_gemm's arguments; "" when valid, else the first
/// problem in words ("piper_gpu_gemm: lda 3 < 4 (the columns of A)").
std::string checkGemm(int32_t aDtype, int32_t cDtype, int32_t transA,
                      int32_t transB, int64_t batch, int64_t m, int64_t n,
                      int64_t k, const void *a, int64_t lda, int64_t strideA,
                      const void *b, int64_t ldb, int64_t strideB,
                      const void *c, int64_t ldc, int64_t strideC);
GemmPlan planGemm(int32_t aDtype, int32_t cDtype, int32_t transA,
                  int32_t transB, int64_t m, int64_t n, int64_t k, int64_t lda,
                  int64_t strideA, int64_t ldb, int64_t strideB);

} // namespace piper::cuda

#endif // PIPER_RT_BACKENDS_CUDA_PLANNING_H
