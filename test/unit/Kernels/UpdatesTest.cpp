//===- UpdatesTest.cpp - Native SGD and AdamW updates vs the reference ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_sgd_update_<t> and piper_k_adamw_update_<t> update the memrefs in
// one native pass; these tests call them through the C ABI on random data
// in random layouts (dense, padded rows, column-major, non-unit strides
// everywhere, a stride-0 operand, rank 0, empty dims, lengths that leave a
// vector tail), f32 and f64, several configurations and step counts, and
// require every result element to be bit for bit what the interpreter
// computes: the stored elements in f64, ref::sgdStep / ref::adamwStep, one
// rounding to the element type. Padding of the result buffers must stay
// untouched. Malformed operands must give the errors and results that the
// former copy through f64 reference tensors gave.
//
//===----------------------------------------------------------------------===//

#include "piper/Kernels/Kernels.h"
#include "piper/Reference/Optimizers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace piper;

#define MR(n) int64_t n##R, void *n##D
extern "C" {
void piper_k_sgd_update_f32(MR(p), MR(g), MR(b), MR(np), MR(nb), double lr,
                            double momentum, double wd);
void piper_k_sgd_update_f64(MR(p), MR(g), MR(b), MR(np), MR(nb), double lr,
                            double momentum, double wd);
void piper_k_adamw_update_f32(MR(p), MR(g), MR(m), MR(v), MR(s), MR(np), MR(nm),
                              MR(nv), double lr, double b1, double b2,
                              double eps, double wd);
void piper_k_adamw_update_f64(MR(p), MR(g), MR(m), MR(v), MR(s), MR(np), MR(nm),
                              MR(nv), double lr, double b1, double b2,
                              double eps, double wd);
}
#undef MR

namespace {

/// How a test memref lays its elements out in its buffer.
enum class Layout {
  Dense,     // row-major, offset 0
  Padded,    // offset 3, each row padded by 2
  ColMajor,  // offset 2, column-major (dim 0 has stride 1)
  Scattered, // offset 1, every stride twice the dense one plus padding
  Splat,     // offset 1, every stride 0 (one element; operands only)
};
const char *name(Layout l) {
  switch (l) {
  case Layout::Dense:
    return "dense";
  case Layout::Padded:
    return "padded";
  case Layout::ColMajor:
    return "colmajor";
  case Layout::Scattered:
    return "scattered";
  case Layout::Splat:
    return "splat";
  }
  return "?";
}
const Layout kLayouts[] = {Layout::Dense, Layout::Padded, Layout::ColMajor,
                           Layout::Scattered};

/// A strided memref of T that owns its buffer and descriptor. Elements
/// outside the view hold NaN.
template <typename T> struct Buf {
  ref::Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::vector<T> data;
  std::vector<int64_t> desc;

  Buf(ref::Shape s, Layout layout) : shape(std::move(s)) {
    int64_t rank = shape.size();
    strides.assign(rank, 0);
    if (layout == Layout::Splat) {
      offset = 1;
    } else if (layout == Layout::ColMajor) {
      offset = 2;
      int64_t st = 1;
      for (int64_t d = 0; d < rank; ++d) {
        strides[d] = st;
        st *= std::max<int64_t>(shape[d], 1);
      }
    } else {
      offset = layout == Layout::Dense ? 0 : layout == Layout::Padded ? 3 : 1;
      int64_t st = layout == Layout::Scattered ? 2 : 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        strides[d] = st;
        int64_t extent = st * std::max<int64_t>(shape[d], 1);
        if (layout == Layout::Scattered)
          extent = 2 * extent + 1;
        else if (d == rank - 1 && layout == Layout::Padded)
          extent += 2;
        st = extent;
      }
    }
    int64_t span = offset + 1;
    for (int64_t d = 0; d < rank; ++d)
      span += (std::max<int64_t>(shape[d], 1) - 1) * strides[d];
    data.assign(span + 3, std::numeric_limits<T>::quiet_NaN());
    desc.assign(3 + 2 * rank, 0);
    void *p = data.data();
    std::memcpy(&desc[0], &p, sizeof p);
    std::memcpy(&desc[1], &p, sizeof p);
    desc[2] = offset;
    for (int64_t d = 0; d < rank; ++d) {
      desc[3 + d] = shape[d];
      desc[3 + rank + d] = strides[d];
    }
  }
  int64_t rank() const { return shape.size(); }
  void *descriptor() { return desc.data(); }
  int64_t numel() const { return ref::numelOf(shape); }
  /// Buffer index of the row-major element `flat`.
  int64_t at(int64_t flat) const {
    int64_t i = offset;
    for (int64_t d = rank() - 1; d >= 0; --d) {
      i += (flat % shape[d]) * strides[d];
      flat /= shape[d];
    }
    return i;
  }
  /// Random values of magnitude 10^[lo, hi), signed unless `positive`,
  /// with an occasional exact zero.
  void fill(std::mt19937_64 &rng, double lo, double hi, bool positive) {
    std::uniform_real_distribution<double> mag(lo, hi), unit(0.0, 1.0);
    for (int64_t i = 0, n = numel(); i < n; ++i) {
      double v = std::pow(10.0, mag(rng));
      if (!positive && unit(rng) < 0.5)
        v = -v;
      if (unit(rng) < 0.02)
        v = 0.0;
      data[at(i)] = static_cast<T>(v);
    }
  }
  /// The view's elements (as stored) in f64: what the interpreter reads.
  ref::Tensor tensor() const {
    ref::Tensor t = ref::Tensor::zeros(shape);
    for (int64_t i = 0, n = numel(); i < n; ++i)
      t.data[i] = static_cast<double>(data[at(i)]);
    return t;
  }
  /// Buffer slots outside the view that are no longer NaN.
  int64_t touchedPadding() const {
    std::vector<bool> inView(data.size(), false);
    for (int64_t i = 0, n = numel(); i < n; ++i)
      inView[at(i)] = true;
    int64_t touched = 0;
    for (size_t i = 0; i < data.size(); ++i)
      if (!inView[i] && !std::isnan(data[i]))
        ++touched;
    return touched;
  }
};

/// Every element of `got` has the bits of `want` rounded once to T.
template <typename T>
void expectBits(const char *what, const Buf<T> &got, const ref::Tensor &want) {
  ASSERT_EQ(got.shape, want.shape) << what;
  int64_t bad = 0;
  for (int64_t i = 0, n = got.numel(); i < n; ++i) {
    T g = got.data[got.at(i)];
    T w = static_cast<T>(want.data[i]);
    if (std::memcmp(&g, &w, sizeof(T)) != 0 && bad++ < 5)
      ADD_FAILURE() << what << " element " << i << ": " << std::hexfloat
                    << static_cast<double>(g) << " vs "
                    << static_cast<double>(w) << std::defaultfloat;
  }
  EXPECT_EQ(bad, 0) << what << ": elements that differ";
  EXPECT_EQ(got.touchedPadding(), 0) << what;
}

const ref::Shape kShapes[] = {
    {},          // rank 0
    {1},         //
    {7},         // shorter than a vector tail or two
    {1000},      // long, with a tail
    {3, 5},      //
    {2, 3, 4},   //
    {4, 1, 6},   // a size-1 dim in the middle
    {1, 9, 1},   // size-1 outer and inner dims
    {0, 3},      // empty
    {33, 65},    //
    {5, 2, 3, 7} // rank 4
};

struct AdamWCase {
  double lr, beta1, beta2, eps, weightDecay;
};
const AdamWCase kAdamW[] = {
    {1e-3, 0.9, 0.999, 1e-8, 0.01}, // piper's (and PyTorch's) defaults
    {0.1, 0.5, 0.9, 1e-6, 0.0},     // no weight decay
    {3e-4, 0.0, 0.0, 0.0, 0.1},     // betas 0: no history, eps 0
    {1e-2, 0.95, 0.99999, 1e-3, 1.5},
};
const int64_t kSteps[] = {1, 2, 3, 10, 1000, 123457};

template <typename T> struct Kernels;
template <> struct Kernels<float> {
  static constexpr auto sgd = piper_k_sgd_update_f32;
  static constexpr auto adamw = piper_k_adamw_update_f32;
  static constexpr const char *name = "f32";
};
template <> struct Kernels<double> {
  static constexpr auto sgd = piper_k_sgd_update_f64;
  static constexpr auto adamw = piper_k_adamw_update_f64;
  static constexpr const char *name = "f64";
};

/// Rank-0 i64 step memref.
struct Step {
  int64_t value[2];
  int64_t desc[3];
  explicit Step(int64_t v) {
    value[0] = v;
    value[1] = -77; // must not be read
    void *p = value;
    std::memcpy(&desc[0], &p, sizeof p);
    std::memcpy(&desc[1], &p, sizeof p);
    desc[2] = 0;
  }
};

/// One AdamW update of random operands in layouts `in` (param, grad, m, v)
/// and `out` (new param, m, v) against the reference.
template <typename T>
void checkAdamW(const ref::Shape &shape, const Layout (&in)[4],
                const Layout (&out)[3], const AdamWCase &c, int64_t step,
                uint64_t seed) {
  SCOPED_TRACE(std::string(Kernels<T>::name) + " " + ref::shapeToString(shape) +
               " layouts " + name(in[0]) + "/" + name(in[1]) + "/" +
               name(in[2]) + "/" + name(in[3]) + " -> " + name(out[0]) + "/" +
               name(out[1]) + "/" + name(out[2]) + " step " +
               std::to_string(step) + " lr " + std::to_string(c.lr) +
               " beta1 " + std::to_string(c.beta1));
  std::mt19937_64 rng(seed);
  Buf<T> p(shape, in[0]), g(shape, in[1]), m(shape, in[2]), v(shape, in[3]);
  p.fill(rng, -3, 1, false);
  g.fill(rng, -7, 1, false);
  m.fill(rng, -8, -1, false);
  v.fill(rng, -12, -1, true);
  Buf<T> np(shape, out[0]), nm(shape, out[1]), nv(shape, out[2]);
  Step s(step);

  ref::AdamWConfig config;
  config.lr = c.lr;
  config.beta1 = c.beta1;
  config.beta2 = c.beta2;
  config.eps = c.eps;
  config.weightDecay = c.weightDecay;
  ref::Tensor wp = p.tensor(), wm = m.tensor(), wv = v.tensor();
  ref::Status status = ref::adamwStep(config, step, wp, g.tensor(), wm, wv);
  ASSERT_TRUE(status.ok()) << status.message();

  piper_kernels_clear_error();
  int64_t r = p.rank();
  Kernels<T>::adamw(r, p.descriptor(), r, g.descriptor(), r, m.descriptor(), r,
                    v.descriptor(), 0, s.desc, r, np.descriptor(), r,
                    nm.descriptor(), r, nv.descriptor(), c.lr, c.beta1, c.beta2,
                    c.eps, c.weightDecay);
  EXPECT_EQ(piper_kernels_last_error(), nullptr);
  expectBits("param", np, wp);
  expectBits("exp_avg", nm, wm);
  expectBits("exp_avg_sq", nv, wv);
}

struct SgdCase {
  double lr, momentum, weightDecay;
};
const SgdCase kSgd[] = {
    {0.01, 0.0, 0.0}, // the defaults: plain SGD, buffer passed through
    {0.1, 0.9, 0.0},  //
    {0.05, 0.0, 1e-4},
    {1e-3, 0.99, 0.5},
};

template <typename T>
void checkSgd(const ref::Shape &shape, const Layout (&in)[3],
              const Layout (&out)[2], const SgdCase &c, uint64_t seed) {
  SCOPED_TRACE(std::string(Kernels<T>::name) + " " + ref::shapeToString(shape) +
               " layouts " + name(in[0]) + "/" + name(in[1]) + "/" +
               name(in[2]) + " -> " + name(out[0]) + "/" + name(out[1]) +
               " lr " + std::to_string(c.lr) + " momentum " +
               std::to_string(c.momentum) + " wd " +
               std::to_string(c.weightDecay));
  std::mt19937_64 rng(seed);
  Buf<T> p(shape, in[0]), g(shape, in[1]), b(shape, in[2]);
  p.fill(rng, -3, 1, false);
  g.fill(rng, -7, 1, false);
  b.fill(rng, -6, 0, false);
  Buf<T> np(shape, out[0]), nb(shape, out[1]);

  ref::SgdConfig config;
  config.lr = c.lr;
  config.momentum = c.momentum;
  config.weightDecay = c.weightDecay;
  ref::Tensor wp = p.tensor(), wb = b.tensor();
  ref::Status status = ref::sgdStep(config, wp, g.tensor(), wb);
  ASSERT_TRUE(status.ok()) << status.message();

  piper_kernels_clear_error();
  int64_t r = p.rank();
  Kernels<T>::sgd(r, p.descriptor(), r, g.descriptor(), r, b.descriptor(), r,
                  np.descriptor(), r, nb.descriptor(), c.lr, c.momentum,
                  c.weightDecay);
  EXPECT_EQ(piper_kernels_last_error(), nullptr);
  expectBits("param", np, wp);
  expectBits("momentum_buffer", nb, wb);
}

template <typename T> void adamwAll() {
  uint64_t seed = 1;
  const Layout D = Layout::Dense;
  for (const ref::Shape &shape : kShapes) {
    for (const AdamWCase &c : kAdamW)
      for (int64_t step : kSteps)
        checkAdamW<T>(shape, {D, D, D, D}, {D, D, D}, c, step, seed++);
    // Each operand and result in each layout, the others dense.
    for (Layout l : kLayouts) {
      for (int k = 0; k < 4; ++k) {
        Layout in[4] = {D, D, D, D};
        in[k] = l;
        checkAdamW<T>(shape, in, {D, D, D}, kAdamW[0], 7, seed++);
      }
      for (int k = 0; k < 3; ++k) {
        Layout out[3] = {D, D, D};
        out[k] = l;
        checkAdamW<T>(shape, {D, D, D, D}, out, kAdamW[1], 2, seed++);
      }
      checkAdamW<T>(shape, {l, l, l, l}, {l, l, l}, kAdamW[3], 1000, seed++);
    }
    // A gradient broadcast from one element (stride 0 everywhere).
    checkAdamW<T>(shape, {D, Layout::Splat, D, D}, {D, D, D}, kAdamW[0], 3,
                  seed++);
  }
}

template <typename T> void sgdAll() {
  uint64_t seed = 1000;
  const Layout D = Layout::Dense;
  for (const ref::Shape &shape : kShapes) {
    for (const SgdCase &c : kSgd) {
      checkSgd<T>(shape, {D, D, D}, {D, D}, c, seed++);
      for (Layout l : kLayouts)
        checkSgd<T>(shape, {l, l, l}, {l, l}, c, seed++);
    }
    for (Layout l : kLayouts) {
      for (int k = 0; k < 3; ++k) {
        Layout in[3] = {D, D, D};
        in[k] = l;
        checkSgd<T>(shape, in, {D, D}, kSgd[3], seed++);
      }
      checkSgd<T>(shape, {D, D, D}, {l, D}, kSgd[1], seed++);
      checkSgd<T>(shape, {D, D, D}, {D, l}, kSgd[2], seed++);
    }
    checkSgd<T>(shape, {Layout::Splat, D, Layout::Splat}, {D, D}, kSgd[3],
                seed++);
  }
}

TEST(UpdatesTest, AdamWMatchesReferenceF64) { adamwAll<double>(); }
TEST(UpdatesTest, AdamWMatchesReferenceF32) { adamwAll<float>(); }
TEST(UpdatesTest, SgdMatchesReferenceF64) { sgdAll<double>(); }
TEST(UpdatesTest, SgdMatchesReferenceF32) { sgdAll<float>(); }

/// Random shapes, layouts, configurations and step counts.
template <typename T> void randomCases(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dim(1, 12), rank(0, 4), layout(0, 3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 150; ++trial) {
    ref::Shape shape;
    for (int d = 0, r = rank(rng); d < r; ++d)
      shape.push_back(dim(rng));
    auto pick = [&] { return kLayouts[layout(rng)]; };
    AdamWCase a{std::pow(10.0, -4 + 3 * unit(rng)), 0.99 * unit(rng),
                0.99999 * unit(rng), std::pow(10.0, -9 + 6 * unit(rng)),
                unit(rng) < 0.3 ? 0.0 : unit(rng)};
    int64_t step = 1 + static_cast<int64_t>(std::pow(10.0, 6 * unit(rng)));
    checkAdamW<T>(shape, {pick(), pick(), pick(), pick()},
                  {pick(), pick(), pick()}, a, step, rng());
    SgdCase s{std::pow(10.0, -4 + 3 * unit(rng)),
              unit(rng) < 0.3 ? 0.0 : unit(rng),
              unit(rng) < 0.3 ? 0.0 : unit(rng)};
    checkSgd<T>(shape, {pick(), pick(), pick()}, {pick(), pick()}, s, rng());
  }
}

TEST(UpdatesTest, RandomCasesF64) { randomCases<double>(21); }
TEST(UpdatesTest, RandomCasesF32) { randomCases<float>(22); }

//===----------------------------------------------------------------------===//
// Errors: the messages (and results) of the copy through the reference
//===----------------------------------------------------------------------===//

std::string lastError() {
  const char *e = piper_kernels_last_error();
  return e ? e : "<none>";
}

struct AdamWArgs {
  Buf<double> p, g, m, v, np, nm, nv;
  explicit AdamWArgs(const ref::Shape &s, const ref::Shape &gShape = {},
                     const ref::Shape &outShape = {})
      : p(s, Layout::Dense), g(gShape.empty() ? s : gShape, Layout::Dense),
        m(s, Layout::Dense), v(s, Layout::Dense),
        np(outShape.empty() ? s : outShape, Layout::Padded),
        nm(s, Layout::Padded), nv(s, Layout::Padded) {
    std::mt19937_64 rng(5);
    p.fill(rng, -2, 0, false);
    g.fill(rng, -2, 0, false);
    m.fill(rng, -3, -1, false);
    v.fill(rng, -4, -2, true);
  }
  void run(void *stepDesc, int64_t stepRank, double beta1 = 0.9,
           double beta2 = 0.999) {
    piper_kernels_clear_error();
    piper_k_adamw_update_f64(p.rank(), p.descriptor(), g.rank(), g.descriptor(),
                             m.rank(), m.descriptor(), v.rank(), v.descriptor(),
                             stepRank, stepDesc, np.rank(), np.descriptor(),
                             nm.rank(), nm.descriptor(), nv.rank(),
                             nv.descriptor(), 1e-3, beta1, beta2, 1e-8, 0.01);
  }
  /// No result was written (the kernel stopped at the reference's error).
  void expectUntouched() {
    for (Buf<double> *b : {&np, &nm, &nv})
      for (int64_t i = 0; i < b->numel(); ++i)
        EXPECT_TRUE(std::isnan(b->data[b->at(i)]));
  }
};

TEST(UpdatesTest, AdamWStepErrors) {
  {
    AdamWArgs a({2, 3});
    Step s(0);
    a.run(s.desc, 0);
    EXPECT_EQ(lastError(), "adamw_update: adamw: step must be >= 1 (the first "
                           "update is step 1), got 0");
    a.expectUntouched();
  }
  {
    AdamWArgs a({2, 3});
    Step s(-4);
    a.run(s.desc, 0);
    EXPECT_EQ(lastError(), "adamw_update: adamw: step must be >= 1 (the first "
                           "update is step 1), got -4");
    a.expectUntouched();
  }
  {
    // A step tensor of two values.
    AdamWArgs a({2, 3});
    Buf<int64_t> steps({2}, Layout::Dense);
    steps.data[0] = 1;
    steps.data[1] = 2;
    a.run(steps.descriptor(), 1);
    EXPECT_EQ(lastError(), "adamw_update: step must hold one value");
    a.expectUntouched();
  }
  {
    // A step tensor of one value, rank 1, strided: accepted.
    AdamWArgs a({2, 3});
    Buf<int64_t> steps({1}, Layout::Scattered);
    steps.data[steps.at(0)] = 4;
    a.run(steps.descriptor(), 1);
    EXPECT_EQ(lastError(), "<none>");
    EXPECT_EQ(a.np.touchedPadding(), 0);
  }
}

TEST(UpdatesTest, AdamWConfigAndShapeErrors) {
  {
    AdamWArgs a({2, 3});
    Step s(1);
    a.run(s.desc, 0, 1.0, 0.999);
    EXPECT_EQ(lastError(),
              "adamw_update: adamw: beta1 must be in [0, 1), got 1");
    a.expectUntouched();
  }
  {
    AdamWArgs a({2, 3});
    Step s(1);
    a.run(s.desc, 0, 0.9, -0.5);
    EXPECT_EQ(lastError(),
              "adamw_update: adamw: beta2 must be in [0, 1), got -0.5");
    a.expectUntouched();
  }
  {
    // grad disagrees with param; checked before the step value.
    AdamWArgs a({2, 3}, {3, 2});
    Step s(0);
    a.run(s.desc, 0);
    EXPECT_EQ(lastError(),
              "adamw_update: adamw: param has shape [2, 3] but grad has "
              "shape [3, 2]");
    a.expectUntouched();
  }
  {
    // A result of the wrong shape: zeroed, the others written.
    AdamWArgs a({2, 3}, {}, {6});
    Step s(1);
    a.run(s.desc, 0);
    EXPECT_EQ(lastError(), "adamw_update: result has shape [2, 3] but the "
                           "plan expects [6]");
    for (int64_t i = 0; i < a.np.numel(); ++i)
      EXPECT_EQ(a.np.data[a.np.at(i)], 0.0);
    for (int64_t i = 0; i < a.nm.numel(); ++i)
      EXPECT_FALSE(std::isnan(a.nm.data[a.nm.at(i)]));
  }
  piper_kernels_clear_error();
}

TEST(UpdatesTest, SgdShapeErrors) {
  std::mt19937_64 rng(9);
  {
    Buf<float> p({4}, Layout::Dense), g({4}, Layout::Dense),
        b({5}, Layout::Dense), np({4}, Layout::Dense), nb({4}, Layout::Dense);
    p.fill(rng, -1, 0, false);
    g.fill(rng, -1, 0, false);
    b.fill(rng, -1, 0, false);
    piper_kernels_clear_error();
    // Momentum 0: the buffer's shape is still checked.
    piper_k_sgd_update_f32(1, p.descriptor(), 1, g.descriptor(), 1,
                           b.descriptor(), 1, np.descriptor(), 1,
                           nb.descriptor(), 0.1, 0.0, 0.0);
    EXPECT_EQ(lastError(), "sgd_update: sgd: param has shape [4] but "
                           "momentum_buf has shape [5]");
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_TRUE(std::isnan(np.data[i]));
  }
  {
    Buf<double> p({2, 2}, Layout::Dense), g({2, 2}, Layout::Dense),
        b({2, 2}, Layout::Dense), np({2, 2}, Layout::Dense),
        nb({4}, Layout::Dense);
    p.fill(rng, -1, 0, false);
    g.fill(rng, -1, 0, false);
    b.fill(rng, -1, 0, false);
    ref::SgdConfig config;
    config.lr = 0.1;
    config.momentum = 0.9;
    ref::Tensor wp = p.tensor(), wb = b.tensor();
    ASSERT_TRUE(ref::sgdStep(config, wp, g.tensor(), wb).ok());
    piper_kernels_clear_error();
    piper_k_sgd_update_f64(2, p.descriptor(), 2, g.descriptor(), 2,
                           b.descriptor(), 2, np.descriptor(), 1,
                           nb.descriptor(), 0.1, 0.9, 0.0);
    EXPECT_EQ(lastError(), "sgd_update: result has shape [2, 2] but the plan "
                           "expects [4]");
    expectBits("param", np, wp);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(nb.data[i], 0.0);
  }
  piper_kernels_clear_error();
}

} // namespace
