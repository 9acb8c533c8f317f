//===- CudaPlanningTest.cpp - The CUDA backend's device-free logic --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The caching allocator's bookkeeping on a fake device whose streams
// complete only when a test says so, the NCCL split plan against mesh
// coordinates computed here, SM partitions and CTA limits, strided copies
// against piper_memref_gather, and the row-major GEMM's cuBLAS mapping run
// by a column-major reference GEMM against a direct row-major one.
//
//===----------------------------------------------------------------------===//

#include "../../../../runtime/backends/cuda/CachingAllocator.h"
#include "../../../../runtime/backends/cuda/Planning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

using namespace piper::cuda;

namespace {

//===----------------------------------------------------------------------===//
// The caching allocator
//===----------------------------------------------------------------------===//

/// Streams are integers cast to pointers; each has enqueued/completed
/// counters, and a marker completes when its stream's completed count
/// reaches the enqueued count at the mark.
struct FakeDevice : DeviceMemory {
  struct Marker {
    void *stream;
    uint64_t seq;
  };
  std::map<void *, size_t> blocks;
  size_t capacity = SIZE_MAX, used = 0, allocations = 0, waits = 0;
  std::map<void *, uint64_t> enqueued, completed;
  int liveMarkers = 0;

  void *allocate(size_t bytes) override {
    if (used + bytes > capacity)
      return nullptr;
    void *p = std::malloc(bytes);
    blocks[p] = bytes;
    used += bytes;
    ++allocations;
    return p;
  }
  void release(void *data) override {
    used -= blocks.at(data);
    blocks.erase(data);
    std::free(data);
  }
  void *mark(void *stream) override {
    ++liveMarkers;
    return new Marker{stream, enqueued[stream]};
  }
  bool done(void *m) override {
    auto *mk = static_cast<Marker *>(m);
    return completed[mk->stream] >= mk->seq;
  }
  void wait(void *m) override {
    auto *mk = static_cast<Marker *>(m);
    ++waits;
    completed[mk->stream] = std::max(completed[mk->stream], mk->seq);
  }
  void forget(void *m) override {
    --liveMarkers;
    delete static_cast<Marker *>(m);
  }
  void work(void *stream) { ++enqueued[stream]; }
  void finish(void *stream) { completed[stream] = enqueued[stream]; }
};

void *const S1 = reinterpret_cast<void *>(1);
void *const S2 = reinterpret_cast<void *>(2);

TEST(CudaCachingAllocator, SizeClasses) {
  EXPECT_EQ(CachingAllocator::roundUp(0), 512u);
  EXPECT_EQ(CachingAllocator::roundUp(1), 512u);
  EXPECT_EQ(CachingAllocator::roundUp(512), 512u);
  EXPECT_EQ(CachingAllocator::roundUp(513), 1024u);
  EXPECT_EQ(CachingAllocator::roundUp((1 << 20) - 1), size_t(1) << 20);
  EXPECT_EQ(CachingAllocator::roundUp(1 << 20), size_t(2) << 20);
  EXPECT_EQ(CachingAllocator::roundUp((3 << 20) + 1), size_t(4) << 20);
}

TEST(CudaCachingAllocator, SameStreamReusesAtOnce) {
  FakeDevice dev;
  {
    CachingAllocator a(dev);
    void *p = a.allocate(1000, S1);
    dev.work(S1); // a kernel still reading p
    EXPECT_TRUE(a.free(p, S1));
    // Stream order protects the block: later work on S1 runs after.
    EXPECT_EQ(a.allocate(900, S1), p);
    EXPECT_EQ(dev.allocations, 1u);
    piper_plan_buffer_stats s = a.stats();
    EXPECT_EQ(s.requests, 2u);
    EXPECT_EQ(s.reused, 1u);
    EXPECT_EQ(s.reserved_bytes, 1024u);
    EXPECT_EQ(s.live_bytes, 900u);
    EXPECT_EQ(s.peak_bytes, 1000u);
    EXPECT_EQ(dev.waits, 0u);
  }
  EXPECT_TRUE(dev.blocks.empty());
  EXPECT_EQ(dev.liveMarkers, 0);
}

TEST(CudaCachingAllocator, OtherStreamWaitsForTheFree) {
  FakeDevice dev;
  CachingAllocator a(dev);
  void *p = a.allocate(4096, S1);
  dev.work(S1);
  a.free(p, S1);
  // S1 has not reached the free: S2 must not get the block.
  void *q = a.allocate(4096, S2);
  EXPECT_NE(q, p);
  EXPECT_EQ(dev.allocations, 2u);
  a.free(q, S2);
  dev.finish(S1);
  // Now it may (the smallest usable block: both are 4096).
  void *r = a.allocate(4096, S2);
  EXPECT_TRUE(r == p || r == q);
  EXPECT_EQ(dev.allocations, 2u);
  EXPECT_EQ(dev.waits, 0u);
}

TEST(CudaCachingAllocator, SmallRequestsDoNotPinLargeBlocks) {
  FakeDevice dev;
  CachingAllocator a(dev);
  void *big = a.allocate(4 << 20, S1);
  a.free(big, S1);
  void *small = a.allocate(100, S1);
  EXPECT_NE(small, big);
  EXPECT_EQ(dev.allocations, 2u);
  // A request within twice the block's class takes it.
  a.free(small, S1);
  EXPECT_EQ(a.allocate(3 << 20, S1), big);
}

TEST(CudaCachingAllocator, OutOfMemoryEmptiesTheCacheAndRetries) {
  FakeDevice dev;
  dev.capacity = 8 << 20;
  CachingAllocator a(dev);
  void *p = a.allocate(6 << 20, S1);
  dev.work(S1);
  a.free(p, S1);
  // 6 MiB idle on S1 (pending) + 4 MiB > 8 MiB: the cache waits for the
  // free, returns the block and allocates again.
  void *q = a.allocate(4 << 20, S2);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(dev.waits, 1u);
  EXPECT_EQ(a.stats().reserved_bytes, size_t(4) << 20);
  EXPECT_EQ(a.blocks(), 1u);
  // Beyond the device even when empty: null, the cache intact.
  EXPECT_EQ(a.allocate(16 << 20, S2), nullptr);
  EXPECT_EQ(a.blocks(), 1u);
}

TEST(CudaCachingAllocator, RejectsForeignPointers) {
  FakeDevice dev;
  CachingAllocator a(dev);
  int x = 0;
  EXPECT_FALSE(a.free(&x, S1));
  void *p = a.allocate(10, S1);
  EXPECT_TRUE(a.free(p, S1));
  EXPECT_FALSE(a.free(p, S1)); // a double free
}

//===----------------------------------------------------------------------===//
// Communicator splits
//===----------------------------------------------------------------------===//

TEST(CudaSplit, ColorsAndKeysFollowTheMesh) {
  piper_rt_mesh_impl mesh;
  mesh.names = {"pp", "dp", "tp"};
  mesh.sizes = {2, 3, 2};
  mesh.numDevices = 12;
  uint32_t dp = 1u << 1;
  for (int64_t rank = 0; rank < 12; ++rank) {
    int64_t pp = rank / 6, d = rank / 2 % 3, tp = rank % 2;
    SplitPlan plan = splitFor(mesh, rank, dp);
    // The group: same pp and tp, dp = 0..2, ascending.
    std::vector<int64_t> expect;
    for (int64_t j = 0; j < 3; ++j)
      expect.push_back(pp * 6 + j * 2 + tp);
    EXPECT_EQ(plan.members, expect) << rank;
    EXPECT_EQ(plan.color, expect.front()) << rank;
    EXPECT_EQ(plan.key, d) << rank;
  }
  // Two axes: {pp, tp} groups are the 4 ranks with the same dp; rank 9
  // (pp 1, dp 1, tp 1) is the last of its group, whose color is rank 2.
  SplitPlan p = splitFor(mesh, 9, (1u << 0) | (1u << 2));
  EXPECT_EQ(p.members, (std::vector<int64_t>{2, 3, 8, 9}));
  EXPECT_EQ(p.key, 3);
  EXPECT_EQ(p.color, 2);
}

//===----------------------------------------------------------------------===//
// SM partitions
//===----------------------------------------------------------------------===//

TEST(CudaSmPartition, DeepSeekSplitOnAnH100) {
  // 132 SMs, 0.4242 each: 56 SMs = 7 groups of 8 each, 20 for NCCL.
  SmPartition p = partitionSms(132, 0.4242, 0.4242, smGranularity(9));
  ASSERT_TRUE(p.partitioned) << p.why;
  EXPECT_EQ(p.first, 56);
  EXPECT_EQ(p.second, 56);
  EXPECT_EQ(p.communication, 20);
  CtaLimits l = ctaLimits(p.communication);
  EXPECT_EQ(l.maxCTAs, 20);
  EXPECT_EQ(l.minCTAs, 2);
}

TEST(CudaSmPartition, FallsBackUnderOneGroup) {
  SmPartition p = partitionSms(132, 0.02, 0.5, 8);
  EXPECT_FALSE(p.partitioned);
  EXPECT_NE(p.why.find("under one group of 8"), std::string::npos) << p.why;
  EXPECT_EQ(p.first, 132);
  EXPECT_FALSE(partitionSms(132, 0.6, 0.6, 8).partitioned);
  SmPartition over = partitionSms(14, 0.5, 0.5, 8);
  EXPECT_FALSE(over.partitioned);
  EXPECT_EQ(over.why, "the shares round to more than the device's 14 SMs");
  EXPECT_FALSE(partitionSms(132, 0, 0.5, 8).partitioned);
  EXPECT_EQ(smGranularity(8), 2);
  EXPECT_EQ(ctaLimits(0).maxCTAs, 1);
  EXPECT_EQ(ctaLimits(0).minCTAs, 1);
  EXPECT_EQ(ctaLimits(500).maxCTAs, 64);
}

//===----------------------------------------------------------------------===//
// Strided copies
//===----------------------------------------------------------------------===//

/// Runs the copies on the host, as cuMemcpy2D would.
std::vector<char> runCopies(const std::vector<Copy2D> &copies, const char *base,
                            size_t bytes) {
  std::vector<char> out(bytes, 0);
  for (const Copy2D &c : copies)
    for (size_t row = 0; row < c.height; ++row)
      std::memcpy(out.data() + c.packedOffset + row * c.packedPitch,
                  base + c.viewOffset + row * c.viewPitch, c.width);
  return out;
}

void checkView(std::vector<int64_t> sizes, std::vector<int64_t> strides,
               int64_t offset, size_t expectCopies) {
  std::vector<float> storage(4096);
  for (size_t i = 0; i < storage.size(); ++i)
    storage[i] = static_cast<float>(i);
  piper_memref_view v{reinterpret_cast<char *>(storage.data()), offset,
                      static_cast<int64_t>(sizes.size()), sizes.data(),
                      strides.data()};
  size_t n = static_cast<size_t>(piper_memref_numel(&v));
  std::vector<char> expect(n * 4);
  piper_memref_gather(&v, 4, expect.data());
  std::vector<Copy2D> copies;
  std::string why;
  ASSERT_TRUE(stridedCopies(v.sizes, v.strides, v.rank, 4, copies, why));
  EXPECT_EQ(runCopies(copies, piper_memref_data(&v, 4), n * 4), expect);
  if (expectCopies)
    EXPECT_EQ(copies.size(), expectCopies);
}

TEST(CudaStridedCopy, MatchesTheHostGather) {
  checkView({4, 8}, {8, 1}, 0, 1);         // contiguous: one copy
  checkView({4, 8}, {16, 1}, 3, 1);        // a 2-D slice: one 2-D copy
  checkView({8, 4}, {1, 8}, 0, 8);         // a transpose: element columns
  checkView({2, 3, 4}, {40, 12, 1}, 5, 2); // 3-D slice: one per outer index
  checkView({3, 1, 5}, {5, 99, 1}, 0, 1);  // size-1 dims merge away
  checkView({2, 2, 2, 3}, {200, 50, 8, 2}, 1, 0);
  checkView({}, {}, 7, 1); // a scalar
}

TEST(CudaStridedCopy, EmptyAndNegative) {
  std::vector<Copy2D> copies;
  std::string why;
  int64_t sizes[] = {3, 0}, strides[] = {1, 1};
  EXPECT_TRUE(stridedCopies(sizes, strides, 2, 4, copies, why));
  EXPECT_TRUE(copies.empty());
  int64_t neg[] = {-1, 1}, two[] = {3, 2};
  EXPECT_FALSE(stridedCopies(two, neg, 2, 4, copies, why));
  EXPECT_EQ(why, "a view with a negative stride");
}

TEST(CudaStridedCopy, RandomViews) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int rank = 1 + rng() % 4;
    std::vector<int64_t> sizes(rank), strides(rank);
    int64_t stride = 1 + rng() % 2;
    for (int d = rank - 1; d >= 0; --d) {
      sizes[d] = 1 + rng() % 4;
      strides[d] = stride;
      stride *= sizes[d] + static_cast<int64_t>(rng() % 2);
    }
    if (rng() % 4 == 0 && rank >= 2)
      std::swap(strides[0], strides[rank - 1]); // a permutation
    checkView(sizes, strides, rng() % 5, 0);
  }
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

/// A column-major strided-batched GEMM, as cuBLAS defines it.
void columnMajorGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     double alpha, const double *a, int64_t lda, int64_t sa,
                     const double *b, int64_t ldb, int64_t sb, double beta,
                     double *c, int64_t ldc, int64_t sc, int64_t batch) {
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t col = 0; col < n; ++col)
      for (int64_t row = 0; row < m; ++row) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = ta ? a[i * sa + row * lda + p] : a[i * sa + p * lda + row];
          double y = tb ? b[i * sb + p * ldb + col] : b[i * sb + col * ldb + p];
          sum += x * y;
        }
        double &out = c[i * sc + col * ldc + row];
        out = alpha * sum + beta * out;
      }
}

TEST(CudaGemm, RowMajorMapsOntoColumnMajor) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      int64_t batch = 2, m = 3, n = 5, k = 4;
      // Stored row-major with padded leading dimensions.
      int64_t lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 1;
      int64_t rowsA = ta ? k : m, rowsB = tb ? n : k;
      int64_t sa = rowsA * lda, sb = rowsB * ldb, sc = m * ldc;
      std::vector<double> A(batch * sa), B(batch * sb), C(batch * sc);
      for (double &x : A)
        x = u(rng);
      for (double &x : B)
        x = u(rng);
      for (double &x : C)
        x = u(rng);
      std::vector<double> expect = C, got = C;
      double alpha = 0.75, beta = -0.5;
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p)
              sum += (ta ? A[i * sa + p * lda + r] : A[i * sa + r * lda + p]) *
                     (tb ? B[i * sb + c * ldb + p] : B[i * sb + p * ldb + c]);
            double &out = expect[i * sc + r * ldc + c];
            out = alpha * sum + beta * out;
          }
      ASSERT_EQ(checkGemm(1, 1, ta, tb, batch, m, n, k, A.data(), lda, sa,
                          B.data(), ldb, sb, C.data(), ldc, sc),
                "");
      GemmPlan p = planGemm(1, 1, ta, tb, m, n, k, lda, sa, ldb, sb);
      ASSERT_TRUE(p.firstIsB);
      EXPECT_TRUE(p.f64Compute);
      columnMajorGemm(p.transFirst, p.transSecond, p.m, p.n, p.k, alpha,
                      B.data(), p.ldFirst, p.strideFirst, A.data(), p.ldSecond,
                      p.strideSecond, beta, got.data(), ldc, sc, batch);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], expect[i], 1e-12) << ta << tb << i;
    }
}

TEST(CudaGemm, ArgumentChecks) {
  float x = 0;
  auto check = [&](int32_t ad, int32_t cd, int64_t lda, int64_t ldb,
                   int64_t ldc) {
    return checkGemm(ad, cd, 0, 0, 1, 4, 5, 6, &x, lda, 0, &x, ldb, 0, &x, ldc,
                     0);
  };
  EXPECT_EQ(check(0, 0, 6, 5, 5), "");
  EXPECT_EQ(check(3, 0, 6, 5, 5), "");
  EXPECT_EQ(check(3, 3, 6, 5, 5), "");
  EXPECT_EQ(check(0, 0, 5, 5, 5),
            "piper_gpu_gemm: lda 5 < 6 (the columns of A)");
  EXPECT_EQ(check(0, 0, 6, 4, 5),
            "piper_gpu_gemm: ldb 4 < 5 (the columns of B)");
  EXPECT_EQ(check(0, 0, 6, 5, 4),
            "piper_gpu_gemm: ldc 4 < 5 (the columns of C)");
  EXPECT_EQ(check(2, 0, 6, 5, 5),
            "piper_gpu_gemm: input dtype 2 is not f32, f64 or bf16");
  EXPECT_NE(check(0, 3, 6, 5, 5).find("input dtype 0 with output dtype 3"),
            std::string::npos);
  EXPECT_NE(check(1, 0, 6, 5, 5).find("f64 takes f64"), std::string::npos);
  EXPECT_EQ(checkGemm(0, 0, 0, 0, -1, 4, 5, 6, &x, 6, 0, &x, 5, 0, &x, 5, 0),
            "piper_gpu_gemm: negative size (batch -1, m 4, n 5, k 6)");
  EXPECT_EQ(checkGemm(0, 0, 0, 0, 2, 4, 5, 6, &x, 6, 24, &x, 5, 30, &x, 5, 0),
            "piper_gpu_gemm: batch stride 0 for C would write one matrix "
            "twice");
  EXPECT_EQ(
      checkGemm(0, 0, 0, 0, 1, 4, 5, 6, nullptr, 6, 0, &x, 5, 0, &x, 5, 0),
      "piper_gpu_gemm: null matrix pointer");
  // Empty products need no pointers; a transposed A's row is m long.
  EXPECT_EQ(checkGemm(0, 0, 0, 0, 0, 4, 5, 6, nullptr, 6, 0, nullptr, 5, 0,
                      nullptr, 5, 0),
            "");
  EXPECT_EQ(checkGemm(0, 0, 1, 1, 1, 4, 5, 6, &x, 4, 0, &x, 6, 0, &x, 5, 0),
            "");
}

} // namespace
