//===- Inputs.cpp - Parameters and synthetic data for a model -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Interpreter/Inputs.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Interpreter/SyntheticData.h"
#include "piper/Reference/Init.h"

#include "mlir/IR/BuiltinTypes.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// What one use of an integer argument says about its range: the bound and
/// the role that implies it, or nothing for a use that implies no bound.
struct UseBound {
  int64_t bound;
  const char *role;
  Operation *user;
};

std::optional<UseBound> boundOfUse(OpOperand &use) {
  Operation *user = use.getOwner();
  unsigned operand = use.getOperandNumber();
  auto dim = [](Value value, unsigned d) {
    return cast<RankedTensorType>(value.getType()).getDimSize(d);
  };
  if (auto op = dyn_cast<CrossEntropyOp>(user); op && operand == 1)
    return UseBound{dim(op.getLogits(), 1),
                    "piper.cross_entropy labels "
                    "(dim 1 of the logits)",
                    user};
  if (auto op = dyn_cast<EmbeddingOp>(user); op && operand == 1)
    return UseBound{dim(op.getTable(), 0),
                    "piper.embedding ids (rows of the table)", user};
  if (auto op = dyn_cast<DispatchOp>(user); op && operand == 1)
    return UseBound{dim(op.getResult(), 0),
                    "piper.dispatch indices (dim 0 of the result)", user};
  if (auto op = dyn_cast<CombineOp>(user); op && operand == 2)
    return UseBound{dim(op.getY(), 0),
                    "piper.combine indices (dim 0 of the expert outputs)",
                    user};
  return std::nullopt;
}

std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

} // namespace

FailureOr<SmallVector<ArgumentInfo>>
mlir::piper::analyzeArguments(func::FuncOp fn) {
  SmallVector<ArgumentInfo> infos;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned index = arg.getArgNumber();
    auto describe = [&]() {
      return emitError(arg.getLoc())
             << "piper-interp: argument #" << index << " of @"
             << fn.getSymName() << " (" << arg.getType() << ")";
    };
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return describe() << " is not a ranked tensor";
    if (!type.hasStaticShape())
      return describe() << " has a dynamic shape; the interpreter needs "
                           "static argument shapes to make its data";
    ArgumentInfo info;
    info.index = index;
    info.shape.assign(type.getShape().begin(), type.getShape().end());
    if (auto param = fn.getArgAttrOfType<ParamAttr>(
            index, PiperDialect::getParamAttrName())) {
      info.kind = ArgumentInfo::Kind::Parameter;
      info.param = param;
    } else if (isa<FloatType>(type.getElementType())) {
      info.kind = ArgumentInfo::Kind::FloatData;
    } else if (isa<IntegerType, IndexType>(type.getElementType())) {
      info.kind = ArgumentInfo::Kind::IndexData;
      std::optional<UseBound> tightest;
      // Uses through DAG tasks are uses of the callee's argument.
      SmallVector<OpOperand *> uses;
      SmallVector<Value> values{arg};
      while (!values.empty()) {
        Value value = values.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          // A microbatch holds some of the argument's rows: same bounds.
          if (auto microbatch = dyn_cast<MicrobatchOp>(use.getOwner())) {
            values.push_back(microbatch.getResult());
            continue;
          }
          auto task = dyn_cast<TaskOp>(use.getOwner());
          if (!task) {
            uses.push_back(&use);
            continue;
          }
          auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              task, task.getCalleeAttr());
          if (callee && !callee.isExternal())
            values.push_back(callee.getArgument(use.getOperandNumber()));
        }
      }
      for (OpOperand *usePtr : uses) {
        OpOperand &use = *usePtr;
        if (isa<VJPOp>(use.getOwner()))
          continue;
        std::optional<UseBound> bound = boundOfUse(use);
        if (!bound)
          continue;
        if (ShapedType::isDynamic(bound->bound)) {
          InFlightDiagnostic diag =
              describe() << " is used as " << bound->role
                         << ", which is dynamic, so its value range is "
                            "unknown";
          diag.attachNote(bound->user->getLoc()) << "used here";
          return diag;
        }
        if (bound->bound < 1)
          return describe() << " is used as " << bound->role
                            << " of size 0, so no value is in range";
        if (!tightest || bound->bound < tightest->bound)
          tightest = bound;
      }
      if (!tightest)
        return describe()
               << " is an integer input whose value range cannot be "
                  "inferred: use it as piper.cross_entropy labels, "
                  "piper.embedding ids or piper.dispatch/piper.combine "
                  "indices";
      info.bound = tightest->bound;
    } else {
      return describe() << " has an element type the interpreter cannot "
                           "make data for";
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

FailureOr<ref::Tensor> mlir::piper::initialParameter(func::FuncOp fn,
                                                     const ArgumentInfo &arg,
                                                     uint64_t seed) {
  ref::Tensor value;
  ref::Status status = ref::Status::success();
  std::string name = arg.param.getName().str();
  switch (arg.param.getInit()) {
  case InitKind::Normal:
    status = ref::initNormal(seed, name, arg.shape,
                             arg.param.getStd().getValueAsDouble(), value);
    break;
  case InitKind::Zeros:
    status = ref::initZeros(arg.shape, value);
    break;
  case InitKind::Ones:
    status = ref::initOnes(arg.shape, value);
    break;
  }
  if (!status.ok())
    return emitError(fn.getArgument(arg.index).getLoc())
           << "piper-interp: parameter '" << name << "': " << status.message();
  return value;
}

FailureOr<ref::Tensor>
mlir::piper::initialParameterFrom(func::FuncOp fn, const ArgumentInfo &arg,
                                  const ref::ParamsFile &file) {
  ref::Tensor value;
  std::string name = arg.param.getName().str();
  if (ref::Status status = file.lookup(name, arg.shape, value); !status.ok())
    return emitError(fn.getArgument(arg.index).getLoc())
           << "piper-interp: " << status.message();
  return value;
}

FailureOr<RuntimeValue> mlir::piper::syntheticArgument(func::FuncOp fn,
                                                       const ArgumentInfo &arg,
                                                       uint64_t seed,
                                                       uint64_t step) {
  RuntimeValue value;
  ref::Status status = ref::Status::success();
  if (arg.kind == ArgumentInfo::Kind::IndexData) {
    ref::IndexTensor t;
    status =
        ref::syntheticIndex(seed, arg.index, step, arg.shape, arg.bound, t);
    value = std::move(t);
  } else {
    ref::Tensor t;
    status = ref::syntheticFloat(seed, arg.index, step, arg.shape, t);
    value = std::move(t);
  }
  if (!status.ok())
    return emitError(fn.getArgument(arg.index).getLoc())
           << "piper-interp: argument #" << arg.index << " ("
           << typeToString(fn.getArgument(arg.index).getType())
           << "): " << status.message();
  return value;
}
