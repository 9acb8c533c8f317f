//===- BlasVjpTest.cpp - BLAS VJPs of linear and matmul vs the reference --===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_vjp_linear_<wrt>_<t> and piper_k_vjp_matmul_<wrt>_<t> run OpenBLAS
// on the memrefs' own data; these tests call them through the C ABI on
// random shapes and layouts (dense, padded rows, offsets, column-major,
// non-unit strides everywhere, leading dims that do not collapse, empty
// dims) for f32 and f64, and compare with the reference VJPs that the
// interpreter runs: within the summation-order error bound of a dot product
// (plus one rounding for f32), exactly for the bias gradient. Padding of the
// result buffers must stay untouched. One f64 case is also checked against
// central finite differences of the forward linear.
//
//===----------------------------------------------------------------------===//

#include "piper/Kernels/Kernels.h"
#include "piper/Reference/Kernels.h"

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
void piper_k_vjp_linear_0_f32(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_1_f32(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_2_f32(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_0_f64(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_1_f64(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_2_f64(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_matmul_0_f32(MR(a), MR(b), MR(dy), MR(o));
void piper_k_vjp_matmul_1_f32(MR(a), MR(b), MR(dy), MR(o));
void piper_k_vjp_matmul_0_f64(MR(a), MR(b), MR(dy), MR(o));
void piper_k_vjp_matmul_1_f64(MR(a), MR(b), MR(dy), MR(o));
}
#undef MR

namespace {

using Kernel = void (*)(int64_t, void *, int64_t, void *, int64_t, void *,
                        int64_t, void *);

/// How a test memref lays its elements out in its buffer.
enum class Layout {
  Dense,     // row-major, offset 0
  Padded,    // offset 3, each row padded by 2 (leading dims still collapse)
  Sliced,    // offset 1, rows padded by 2, the outermost dim by 5 more
  ColMajor,  // offset 2, column-major (dim 0 has stride 1)
  Scattered, // offset 1, every stride twice the dense one plus padding
};
const char *name(Layout l) {
  switch (l) {
  case Layout::Dense:
    return "dense";
  case Layout::Padded:
    return "padded";
  case Layout::Sliced:
    return "sliced";
  case Layout::ColMajor:
    return "colmajor";
  case Layout::Scattered:
    return "scattered";
  }
  return "?";
}
const Layout kLayouts[] = {Layout::Dense, Layout::Padded, Layout::Sliced,
                           Layout::ColMajor, Layout::Scattered};

/// A strided memref of T that owns its buffer and descriptor. Elements
/// outside the view hold NaN, so reading them poisons the result.
template <typename T> struct Buf {
  ref::Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::vector<T> data;
  std::vector<int64_t> desc;

  Buf(ref::Shape s, Layout layout) : shape(std::move(s)) {
    int64_t rank = shape.size();
    strides.assign(rank, 0);
    if (layout == Layout::ColMajor) {
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
        else if (d == rank - 1 && layout != Layout::Dense)
          extent += 2; // padded rows
        else if (d == 0 && rank > 2 && layout == Layout::Sliced)
          extent += 5;
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
  void fillRandom(std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int64_t i = 0, n = numel(); i < n; ++i)
      data[at(i)] = static_cast<T>(u(rng));
  }
  /// The view's elements (as stored, i.e. already rounded to T) in f64.
  ref::Tensor tensor(bool absolute = false) const {
    ref::Tensor t = ref::Tensor::zeros(shape);
    for (int64_t i = 0, n = numel(); i < n; ++i) {
      double v = static_cast<double>(data[at(i)]);
      t.data[i] = absolute ? std::fabs(v) : v;
    }
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

struct Case {
  std::string op; // "linear" or "matmul"
  ref::Shape lhs, rhs;
};

/// The reference VJP of `c` w.r.t. `wrt` on f64 tensors.
ref::Tensor referenceVjp(const Case &c, int wrt, const ref::Tensor &l,
                         const ref::Tensor &r, const ref::Tensor &dy) {
  ref::Tensor g, unused, dB;
  ref::Status s = c.op == "matmul" ? ref::matmulBackward(l, r, dy, g, dB)
                  : wrt == 0       ? ref::linearBackwardInput(l, r, dy, g)
                  : wrt == 1 ? ref::linearBackwardWeight(l, r, dy, g, nullptr)
                             : ref::linearBackwardWeight(l, r, dy, unused, &g);
  if (c.op == "matmul" && wrt == 1)
    g = dB;
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

template <typename T> Kernel kernelFor(const std::string &op, int wrt) {
  constexpr bool f32 = std::is_same_v<T, float>;
  if (op == "matmul")
    return wrt == 0
               ? (f32 ? piper_k_vjp_matmul_0_f32 : piper_k_vjp_matmul_0_f64)
               : (f32 ? piper_k_vjp_matmul_1_f32 : piper_k_vjp_matmul_1_f64);
  return wrt == 0 ? (f32 ? piper_k_vjp_linear_0_f32 : piper_k_vjp_linear_0_f64)
         : wrt == 1
             ? (f32 ? piper_k_vjp_linear_1_f32 : piper_k_vjp_linear_1_f64)
             : (f32 ? piper_k_vjp_linear_2_f32 : piper_k_vjp_linear_2_f64);
}

ref::Shape resultShape(const Case &c, int wrt) {
  if (wrt == 0)
    return c.lhs;
  if (wrt == 1)
    return c.rhs;
  return {c.rhs[1]}; // linear's bias
}
ref::Shape dyShape(const Case &c) {
  ref::Shape s = c.lhs;
  s.back() = c.rhs.back();
  return s;
}

/// Runs every VJP of `c` with operands in layout `in` and the result in
/// layout `out`, and compares with the reference.
template <typename T>
void check(const Case &c, Layout lIn, Layout rIn, Layout dyIn, Layout out,
           uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buf<T> l(c.lhs, lIn), r(c.rhs, rIn), dy(dyShape(c), dyIn);
  l.fillRandom(rng);
  r.fillRandom(rng);
  dy.fillRandom(rng);
  int wrts = c.op == "linear" ? 3 : 2;
  // Contraction length of each result element, for the error bound.
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < c.lhs.size(); ++d)
    rows *= c.lhs[d];
  int64_t inner[3] = {c.rhs.back(), rows, rows};
  for (int wrt = 0; wrt < wrts; ++wrt) {
    SCOPED_TRACE(c.op + " wrt " + std::to_string(wrt) + " " +
                 ref::shapeToString(c.lhs) + " x " + ref::shapeToString(c.rhs) +
                 " layouts " + name(lIn) + "/" + name(rIn) + "/" + name(dyIn) +
                 " -> " + name(out) +
                 (std::is_same_v<T, float> ? " f32" : " f64"));
    ref::Tensor want =
        referenceVjp(c, wrt, l.tensor(), r.tensor(), dy.tensor());
    // Sum of |terms| of every output element: the dot-product error bound
    // is (length * eps) times it.
    ref::Tensor bound =
        referenceVjp(c, wrt, l.tensor(true), r.tensor(true), dy.tensor(true));
    Buf<T> o(resultShape(c, wrt), out);
    piper_kernels_clear_error();
    kernelFor<T>(c.op, wrt)(l.rank(), l.descriptor(), r.rank(), r.descriptor(),
                            dy.rank(), dy.descriptor(), o.rank(),
                            o.descriptor());
    EXPECT_EQ(piper_kernels_last_error(), nullptr);
    EXPECT_EQ(o.touchedPadding(), 0);
    double eps = std::numeric_limits<T>::epsilon();
    int64_t bad = 0;
    for (int64_t i = 0, n = o.numel(); i < n; ++i) {
      double got = static_cast<double>(o.data[o.at(i)]);
      if (wrt == 2) {
        // Summed in f64 in the reference's order and rounded once: exact.
        if (got != static_cast<double>(static_cast<T>(want.data[i])) &&
            bad++ < 5)
          ADD_FAILURE() << "element " << i << ": " << got << " vs "
                        << want.data[i];
        continue;
      }
      double tol = (inner[wrt] + 2) * eps * bound.data[i];
      if (!(std::fabs(got - want.data[i]) <= tol) && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": " << got << " vs "
                      << want.data[i] << " (tolerance " << tol << ")";
    }
  }
}

const Case kCases[] = {
    {"linear", {7, 5}, {5, 3}},
    {"linear", {2, 3, 4}, {4, 6}},    // leading dims collapsed
    {"linear", {3, 1, 2, 5}, {5, 2}}, // a size-1 leading dim
    {"linear", {6}, {6, 4}},          // rank-1 x: one row
    {"linear", {1, 9}, {9, 1}},       // single row, single column
    {"linear", {0, 4}, {4, 3}},       // no rows: dw and db are zero
    {"linear", {3, 0}, {0, 2}},       // no input features: dx empty, dy w^T
    {"linear", {33, 70}, {70, 41}},   // BLAS's blocked paths
    {"matmul", {4, 6}, {6, 5}},
    {"matmul", {1, 3}, {3, 1}},
    {"matmul", {5, 0}, {0, 3}},
    {"matmul", {37, 29}, {29, 66}},
};

template <typename T> void checkAllLayouts() {
  uint64_t seed = 1;
  for (const Case &c : kCases) {
    // Every layout for each operand and the result, one at a time ...
    for (Layout a : kLayouts) {
      check<T>(c, a, Layout::Dense, Layout::Dense, Layout::Dense, seed++);
      check<T>(c, Layout::Dense, a, Layout::Dense, Layout::Dense, seed++);
      check<T>(c, Layout::Dense, Layout::Dense, a, Layout::Dense, seed++);
      check<T>(c, Layout::Dense, Layout::Dense, Layout::Dense, a, seed++);
    }
    // ... and some mixtures.
    check<T>(c, Layout::ColMajor, Layout::ColMajor, Layout::ColMajor,
             Layout::ColMajor, seed++);
    check<T>(c, Layout::Scattered, Layout::Padded, Layout::Sliced,
             Layout::Scattered, seed++);
    check<T>(c, Layout::Sliced, Layout::ColMajor, Layout::Padded,
             Layout::Sliced, seed++);
  }
}

TEST(BlasVjpTest, MatchesReferenceF64) { checkAllLayouts<double>(); }
TEST(BlasVjpTest, MatchesReferenceF32) { checkAllLayouts<float>(); }

/// Random shapes, random layouts.
template <typename T> void checkRandomShapes(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dim(1, 24), layout(0, 4), rank(1, 4);
  for (int trial = 0; trial < 60; ++trial) {
    Case c;
    c.op = trial % 3 == 0 ? "matmul" : "linear";
    int64_t k = dim(rng), n = dim(rng);
    if (c.op == "matmul") {
      c.lhs = {dim(rng), k};
    } else {
      int r = rank(rng);
      for (int d = 0; d + 1 < r; ++d)
        c.lhs.push_back(std::uniform_int_distribution<int>(1, 5)(rng));
      c.lhs.push_back(k);
    }
    c.rhs = {k, n};
    check<T>(c, kLayouts[layout(rng)], kLayouts[layout(rng)],
             kLayouts[layout(rng)], kLayouts[layout(rng)], rng());
  }
}

TEST(BlasVjpTest, RandomShapesF64) { checkRandomShapes<double>(7); }
TEST(BlasVjpTest, RandomShapesF32) { checkRandomShapes<float>(8); }

TEST(BlasVjpTest, ShapeMismatchIsTheReferenceError) {
  // dy's last dim disagrees with w: the reference's message, result zero.
  Buf<double> x({2, 3}, Layout::Dense), w({3, 4}, Layout::Dense),
      dy({2, 5}, Layout::Dense), o({2, 3}, Layout::Dense);
  std::mt19937_64 rng(3);
  x.fillRandom(rng);
  w.fillRandom(rng);
  dy.fillRandom(rng);
  piper_kernels_clear_error();
  piper_k_vjp_linear_0_f64(2, x.descriptor(), 2, w.descriptor(), 2,
                           dy.descriptor(), 2, o.descriptor());
  ASSERT_NE(piper_kernels_last_error(), nullptr);
  EXPECT_NE(std::string(piper_kernels_last_error()).find("vjp linear"),
            std::string::npos)
      << piper_kernels_last_error();
  for (int64_t i = 0; i < o.numel(); ++i)
    EXPECT_EQ(o.data[o.at(i)], 0.0);
  piper_kernels_clear_error();
}

TEST(BlasVjpTest, LinearMatchesFiniteDifferences) {
  // L(x, w, b) = sum(dy * (x w + b)); its gradients are the three VJPs.
  // Linear is affine in each operand, so central differences are exact up
  // to rounding.
  std::mt19937_64 rng(11);
  Buf<double> x({2, 3, 5}, Layout::Sliced), w({5, 4}, Layout::ColMajor),
      dy({2, 3, 4}, Layout::Scattered);
  x.fillRandom(rng);
  w.fillRandom(rng);
  dy.fillRandom(rng);
  ref::Tensor b = ref::Tensor::zeros({4});
  for (double &v : b.data)
    v = std::uniform_real_distribution<double>(-1, 1)(rng);
  ref::Tensor X = x.tensor(), W = w.tensor(), DY = dy.tensor();
  auto loss = [&](const ref::Tensor &xs, const ref::Tensor &ws,
                  const ref::Tensor &bs) {
    ref::Tensor y;
    EXPECT_TRUE(ref::linear(xs, ws, &bs, y).ok());
    double sum = 0;
    for (size_t i = 0; i < y.data.size(); ++i)
      sum += DY.data[i] * y.data[i];
    return sum;
  };
  const double h = 1e-5;
  auto numeric = [&](ref::Tensor &t, int64_t i) {
    double saved = t.data[i];
    t.data[i] = saved + h;
    double up = loss(X, W, b);
    t.data[i] = saved - h;
    double down = loss(X, W, b);
    t.data[i] = saved;
    return (up - down) / (2 * h);
  };
  Buf<double> dx({2, 3, 5}, Layout::Padded), dw({5, 4}, Layout::Scattered),
      db({4}, Layout::Scattered);
  piper_kernels_clear_error();
  piper_k_vjp_linear_0_f64(3, x.descriptor(), 2, w.descriptor(), 3,
                           dy.descriptor(), 3, dx.descriptor());
  piper_k_vjp_linear_1_f64(3, x.descriptor(), 2, w.descriptor(), 3,
                           dy.descriptor(), 2, dw.descriptor());
  piper_k_vjp_linear_2_f64(3, x.descriptor(), 2, w.descriptor(), 3,
                           dy.descriptor(), 1, db.descriptor());
  ASSERT_EQ(piper_kernels_last_error(), nullptr);
  for (int64_t i = 0; i < dx.numel(); ++i)
    EXPECT_NEAR(dx.data[dx.at(i)], numeric(X, i), 1e-8) << "dx " << i;
  for (int64_t i = 0; i < dw.numel(); ++i)
    EXPECT_NEAR(dw.data[dw.at(i)], numeric(W, i), 1e-8) << "dw " << i;
  for (int64_t i = 0; i < db.numel(); ++i)
    EXPECT_NEAR(db.data[db.at(i)], numeric(b, i), 1e-8) << "db " << i;
}

} // namespace
