//===- Planning.cpp - Device-independent decisions of the CUDA backend ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Planning.h"

#include <algorithm>
#include <cmath>

using namespace piper::cuda;

SplitPlan piper::cuda::splitFor(const piper_rt_mesh_impl &mesh, int64_t rank,
                                uint32_t mask) {
  SplitPlan plan;
  plan.members = piper::rt::groupMembers(mesh, rank, mask);
  plan.color = static_cast<int>(plan.members.front());
  plan.key = static_cast<int>(
      std::find(plan.members.begin(), plan.members.end(), rank) -
      plan.members.begin());
  return plan;
}

int piper::cuda::smGranularity(int major) { return major >= 9 ? 8 : 2; }

SmPartition piper::cuda::partitionSms(int total, double firstShare,
                                      double secondShare, int granularity) {
  SmPartition p;
  auto round = [&](double share) {
    // The nearest whole group: DeepSeek-V3's 0.4242 of 132 is 56 SMs.
    return static_cast<int>(std::lround(total * share / granularity)) *
           granularity;
  };
  p.first = round(firstShare);
  p.second = round(secondShare);
  p.communication = total - p.first - p.second;
  if (!(firstShare > 0 && secondShare > 0 && firstShare + secondShare <= 1)) {
    p.why = "the shares must be in (0, 1] and sum to at most 1";
  } else if (p.communication < 0) {
    p.why = "the shares round to more than the device's " +
            std::to_string(total) + " SMs";
  } else if (p.first < granularity || p.second < granularity) {
    p.why = "a share of " + std::to_string(total) +
            " SMs is under one group of " + std::to_string(granularity);
  } else {
    p.partitioned = true;
    return p;
  }
  p.first = p.second = total;
  p.communication = total;
  return p;
}

CtaLimits piper::cuda::ctaLimits(int communicationSms) {
  CtaLimits l;
  l.maxCTAs = std::clamp(communicationSms, 1, 64);
  l.minCTAs = std::min(l.maxCTAs, 2);
  return l;
}

bool piper::cuda::stridedCopies(const int64_t *sizes, const int64_t *strides,
                                int64_t rank, size_t elt,
                                std::vector<Copy2D> &copies, std::string &why) {
  copies.clear();
  // Dimensions of size 1 do not move; the others merge where contiguous.
  std::vector<int64_t> size, stride;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0)
      return true;
    if (strides[d] < 0) {
      why = "a view with a negative stride";
      return false;
    }
    if (sizes[d] == 1)
      continue;
    if (!size.empty() && stride.back() == sizes[d] * strides[d]) {
      size.back() *= sizes[d];
      stride.back() = strides[d];
      continue;
    }
    size.push_back(sizes[d]);
    stride.push_back(strides[d]);
  }
  int64_t e = static_cast<int64_t>(elt);
  // The innermost run: contiguous rows, or single elements with a pitch.
  Copy2D shape;
  size_t inner; // dimensions the 2-D copy covers
  if (size.empty()) {
    shape.width = elt;
    shape.height = 1;
    inner = 0;
  } else if (stride.back() == 1) {
    shape.width = static_cast<size_t>(size.back() * e);
    shape.packedPitch = size.back() * e;
    if (size.size() >= 2) {
      shape.height = static_cast<size_t>(size[size.size() - 2]);
      shape.viewPitch = stride[size.size() - 2] * e;
      inner = 2;
    } else {
      shape.height = 1;
      shape.viewPitch = shape.packedPitch;
      inner = 1;
    }
  } else {
    shape.width = elt;
    shape.height = static_cast<size_t>(size.back());
    shape.viewPitch = stride.back() * e;
    shape.packedPitch = e;
    inner = 1;
  }
  size_t outer = size.size() - inner;
  int64_t block = static_cast<int64_t>(shape.width * shape.height);
  // Every index of the outer dimensions, row-major.
  std::vector<int64_t> index(outer, 0);
  for (int64_t packed = 0;; packed += block) {
    Copy2D c = shape;
    c.packedOffset = packed;
    for (size_t d = 0; d < outer; ++d)
      c.viewOffset += index[d] * stride[d] * e;
    copies.push_back(c);
    size_t d = outer;
    while (d > 0 && ++index[d - 1] == size[d - 1])
      index[--d] = 0;
    if (d == 0)
      return true;
  }
}

std::string piper::cuda::checkGemm(int32_t aDtype, int32_t cDtype,
                                   int32_t transA, int32_t transB,
                                   int64_t batch, int64_t m, int64_t n,
                                   int64_t k, const void *a, int64_t lda,
                                   int64_t strideA, const void *b, int64_t ldb,
                                   int64_t strideB, const void *c, int64_t ldc,
                                   int64_t strideC) {
  auto fail = [](const std::string &what) { return "piper_gpu_gemm: " + what; };
  auto num = [](int64_t v) { return std::to_string(v); };
  constexpr int32_t f32 = 0, f64 = 1, bf16 = 3;
  if (aDtype != f32 && aDtype != f64 && aDtype != bf16)
    return fail("input dtype " + num(aDtype) + " is not f32, f64 or bf16");
  if (cDtype != f32 && cDtype != f64 && cDtype != bf16)
    return fail("output dtype " + num(cDtype) + " is not f32, f64 or bf16");
  if ((aDtype == f64) != (cDtype == f64) || (aDtype == f32 && cDtype != f32))
    return fail("input dtype " + num(aDtype) + " with output dtype " +
                num(cDtype) +
                " (f64 takes f64; f32 gives f32; bf16 gives bf16 or f32)");
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    return fail("negative size (batch " + num(batch) + ", m " + num(m) +
                ", n " + num(n) + ", k " + num(k) + ")");
  if (strideA < 0 || strideB < 0 || strideC < 0)
    return fail("negative batch stride");
  int64_t colsA = transA ? m : k, colsB = transB ? k : n;
  if (lda < std::max<int64_t>(1, colsA))
    return fail("lda " + num(lda) + " < " + num(colsA) + " (the columns of A)");
  if (ldb < std::max<int64_t>(1, colsB))
    return fail("ldb " + num(ldb) + " < " + num(colsB) + " (the columns of B)");
  if (ldc < std::max<int64_t>(1, n))
    return fail("ldc " + num(ldc) + " < " + num(n) + " (the columns of C)");
  if (batch > 1 && strideC == 0 && m * n > 0)
    return fail("batch stride 0 for C would write one matrix twice");
  bool empty = batch == 0 || m == 0 || n == 0;
  if (!empty && (!c || (k > 0 && (!a || !b))))
    return fail("null matrix pointer");
  return "";
}

GemmPlan piper::cuda::planGemm(int32_t aDtype, int32_t cDtype, int32_t transA,
                               int32_t transB, int64_t m, int64_t n, int64_t k,
                               int64_t lda, int64_t strideA, int64_t ldb,
                               int64_t strideB) {
  GemmPlan p;
  p.transFirst = transB != 0;
  p.transSecond = transA != 0;
  p.m = n;
  p.n = m;
  p.k = k;
  p.ldFirst = ldb;
  p.strideFirst = strideB;
  p.ldSecond = lda;
  p.strideSecond = strideA;
  p.inputType = aDtype;
  p.outputType = cDtype;
  p.f64Compute = aDtype == 1;
  return p;
}
