//===- Tensor.h - f64 tensors and status for the reference ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The value types of Piper's f64 numerical reference: a row-major tensor of
// doubles, a tensor of int64 indices (token ids, labels, expert indices) and
// a Status that carries an error message.
//
// The reference depends on nothing but the C++17 standard library: it is used
// by the MLIR interpreter and by the runtime, and the runtime must not link
// MLIR or LLVM. This header (like Init.h) is header-only so that the runtime
// can use it without linking the kernel library. Builds use -fno-exceptions,
// so every fallible function returns a Status instead of throwing.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_REFERENCE_TENSOR_H
#define PIPER_REFERENCE_TENSOR_H

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace piper::ref {

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

/// The result of a fallible reference function: success, or an error with a
/// message that names the op and the offending operand, e.g.
/// "embedding: id 12 at position 3 is out of range for a table of 10 rows".
/// Functions that fail leave their outputs untouched.
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  /// An error; an empty message is replaced so that ok() stays false.
  static Status error(std::string message) {
    Status s;
    s.message_ = message.empty() ? "unknown error" : std::move(message);
    return s;
  }

  bool ok() const { return message_.empty(); }
  /// The error message; empty on success.
  const std::string &message() const { return message_; }

private:
  Status() = default;
  std::string message_;
};

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

/// The number of elements of `shape` (1 for rank 0), or -1 if a dim is
/// negative or the product overflows int64_t.
inline int64_t numelOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return -1;
    n *= d;
  }
  return n;
}

/// Formats a shape for error messages: "[2, 3]", "[]" for rank 0.
inline std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// Row-major strides of `shape`, in elements.
inline Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Row-major offset of multi-index `index` in `shape`. Unchecked: `index`
/// must have the rank of `shape` and be in bounds.
inline int64_t flatIndex(const Shape &shape, const Shape &index) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + index[i];
  return flat;
}

/// The multi-index of row-major offset `flat` in `shape`. Unchecked.
inline Shape unflattenIndex(const Shape &shape, int64_t flat) {
  Shape index(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] > 0) {
      index[i] = flat % shape[i];
      flat /= shape[i];
    }
  }
  return index;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

namespace detail {
/// Shared by Tensor and IndexTensor: a row-major array of `T`.
template <typename T, typename Derived> struct DenseArray {
  Shape shape;
  std::vector<T> data;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// Product of the dims (see numelOf); -1 for an invalid shape.
  int64_t numel() const { return numelOf(shape); }
  /// True when every dim is non-negative and `data` holds exactly numel()
  /// values. Every reference function checks this before reading `data`.
  bool isWellFormed() const {
    int64_t n = numel();
    return n >= 0 && static_cast<uint64_t>(n) == data.size();
  }

  /// Element at multi-index `index`. Unchecked, like operator[].
  T &at(std::initializer_list<int64_t> index) {
    return data[static_cast<size_t>(flatIndex(shape, Shape(index)))];
  }
  const T &at(std::initializer_list<int64_t> index) const {
    return data[static_cast<size_t>(flatIndex(shape, Shape(index)))];
  }

  /// A tensor of `shape` with every element `value`. An invalid shape gives
  /// an empty `data`, which isWellFormed() then rejects.
  static Derived filled(Shape shape, T value) {
    Derived t;
    int64_t n = numelOf(shape);
    t.shape = std::move(shape);
    t.data.assign(n < 0 ? 0 : static_cast<size_t>(n), value);
    return t;
  }
  static Derived zeros(Shape shape) { return filled(std::move(shape), T(0)); }
  /// A tensor from explicit values; check isWellFormed() if unsure.
  static Derived of(Shape shape, std::vector<T> data) {
    Derived t;
    t.shape = std::move(shape);
    t.data = std::move(data);
    return t;
  }
};
} // namespace detail

/// A dense row-major f64 tensor. Rank 0 (shape {}) holds one value.
struct Tensor : detail::DenseArray<double, Tensor> {};

/// A dense row-major int64 tensor for non-differentiable integer operands:
/// token ids, labels and expert indices.
struct IndexTensor : detail::DenseArray<int64_t, IndexTensor> {};

} // namespace piper::ref

#endif // PIPER_REFERENCE_TENSOR_H
