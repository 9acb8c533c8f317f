//===- PiperMicrobatchOps.cpp - microbatch nodes of the DAG ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "SumVerifier.h"

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// MicrobatchOp
//===----------------------------------------------------------------------===//

LogicalResult MicrobatchOp::verify() {
  // Signed reads: the getters return the attributes zero-extended.
  int64_t count = getCountAttr().getInt();
  int64_t index = getIndexAttr().getInt();
  if (count < 1)
    return emitOpError() << "needs a count of at least 1, got " << count;
  if (index < 0 || index >= count)
    return emitOpError() << "index " << index << " is outside [0, " << count
                         << ")";
  auto value = cast<RankedTensorType>(getValue().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= value.getRank())
    return emitOpError() << "dimension " << dim << " is outside the rank-"
                         << value.getRank() << " value";
  if (value.getElementType() != result.getElementType() ||
      value.getRank() != result.getRank())
    return emitOpError() << "result " << result
                         << " must have the element type and rank of " << value;
  for (int64_t d = 0; d < value.getRank(); ++d) {
    int64_t expected = d == dim && !value.isDynamicDim(d)
                           ? value.getDimSize(d) / count
                           : value.getDimSize(d);
    if (d == dim && !value.isDynamicDim(d) && value.getDimSize(d) % count != 0)
      return emitOpError() << "dimension " << dim << " of " << value
                           << " (size " << value.getDimSize(d)
                           << ") does not divide into " << count
                           << " microbatches";
    if (result.getDimSize(d) != expected)
      return emitOpError() << "result " << result << " must be " << value
                           << " with dimension " << dim << " divided by "
                           << count;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AccumulateOp
//===----------------------------------------------------------------------===//

LogicalResult AccumulateOp::verify() {
  return detail::verifySum(*this, getValues(), getType());
}
