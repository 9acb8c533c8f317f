//===- ProgramPatterns.h - Shared by the program patterns -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The base of --piper-program-to-func's patterns (ProgramToFunc.h) and the
// populate functions of the files that hold them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_PROGRAMPATTERNS_H
#define PIPER_LIB_CONVERSION_PROGRAMPATTERNS_H

#include "piper/Conversion/ProgramToFunc.h"

namespace mlir::piper {

/// A pattern on one instruction kind of the program `lowering` lowers.
template <typename OpTy> struct ProgramOpPattern : OpConversionPattern<OpTy> {
  ProgramOpPattern(const TypeConverter &converter, MLIRContext *context,
                   ProgramLowering &lowering)
      : OpConversionPattern<OpTy>(converter, context), lowering(lowering) {}

  ProgramLowering &lowering;
};

/// piper.launch (ProgramLaunch.cpp).
void populateProgramLaunchPatterns(ProgramTypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   ProgramLowering &lowering);

/// piper.send, piper.recv and piper.comm (ProgramComm.cpp).
void populateProgramCommPatterns(ProgramTypeConverter &converter,
                                 RewritePatternSet &patterns,
                                 ProgramLowering &lowering);

/// A fresh flat-shard type of `shard` with `type`'s elements.
inline RankedTensorType chunkType(const FlatShard &shard, Type type) {
  return RankedTensorType::get({shard.chunk},
                               cast<RankedTensorType>(type).getElementType());
}

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_PROGRAMPATTERNS_H
