//===- MemRef.h - Reading and writing MLIR memref descriptors --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Copies between unranked MLIR memrefs (any rank, strides and offset) and
// the reference's dense row-major f64/i64 tensors, and the error slot every
// kernel reports into. Internal to the kernel library.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_KERNELS_MEMREF_H
#define PIPER_LIB_KERNELS_MEMREF_H

#include "piper-rt/plan_abi.h"
#include "piper/Reference/Tensor.h"

#include <cstdint>

namespace piper::kernels {

/// An unranked memref as the default MLIR calling convention passes it.
/// An unranked memref argument (rank, descriptor), decoded once by the
/// plan ABI's decoder (piper-rt/plan_abi.h, the one place a descriptor's
/// layout is known).
struct MemRef {
  MemRef(int64_t rank, void *desc)
      : rank(rank), view(piper_memref_decode(rank, desc)) {}

  int64_t rank;
  piper_memref_view view;

  void *aligned() const { return view.aligned; }
  int64_t offset() const { return view.offset; }
  const int64_t *sizes() const { return view.sizes; }
  const int64_t *strides() const { return view.strides; }
  ref::Shape shape() const { return ref::Shape(sizes(), sizes() + rank); }
  int64_t numel() const { return ref::numelOf(shape()); }
  /// Element offset (from `aligned`) of the row-major element `flat`.
  int64_t elementOffset(int64_t flat) const {
    int64_t at = offset();
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t size = sizes()[d];
      if (size > 0) {
        at += (flat % size) * strides()[d];
        flat /= size;
      }
    }
    return at;
  }
};

/// The float memref `m` (elements of type T) as an f64 tensor.
template <typename T> ref::Tensor readFloat(MemRef m) {
  ref::Tensor t = ref::Tensor::zeros(m.shape());
  const T *base = static_cast<const T *>(m.aligned());
  for (int64_t i = 0, n = m.numel(); i < n; ++i)
    t.data[i] = static_cast<double>(base[m.elementOffset(i)]);
  return t;
}

/// The i64 memref `m` as an index tensor.
ref::IndexTensor readIndex(MemRef m);

/// Writes `t` into the float memref `m` (rounding to T once). A shape
/// mismatch is a kernel error (the lowering allocates results from the op's
/// static result type, so it means the reference disagrees with the IR).
template <typename T>
void writeFloat(const char *op, const ref::Tensor &t, MemRef m);

/// Writes the index tensor `t` into the i64 memref `m`.
void writeIndex(const char *op, const ref::IndexTensor &t, MemRef m);

/// Records `status` as the library's error if it is the first one.
/// Returns status.ok().
bool report(const char *op, const ref::Status &status);

} // namespace piper::kernels

#endif // PIPER_LIB_KERNELS_MEMREF_H
