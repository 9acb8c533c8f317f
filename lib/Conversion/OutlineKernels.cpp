//===- OutlineKernels.cpp - One function per distinct linalg kernel -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-outline-kernels: every linalg op on buffers (fills and the GEMMs
// already turned into BLAS calls aside) becomes a call of a private
// function that holds only that op, and ops that are the same kernel (same
// op, attributes, body and operand types, whatever their operands) call
// one function. A model repeats its layers: the 4-layer GPT's step held
// every norm, activation, residual and AdamW loop once per layer or
// parameter, and LLVM's O2 and codegen (80% of its compile time) paid for
// each copy. Shared, each distinct kernel is tiled, vectorised, optimised
// and compiled once; a kernel used once is inlined back by the object
// emission (EmitObject.cpp), so nothing changes for it.
//
// Values the op's body reads from outside (a scalar such as a learning
// rate or a folded splat) are cloned into the function when they are
// constants (so that the constant stays visible to the vectoriser and two
// kernels differing only in it stay apart) and passed as arguments
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::piper {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// The name every candidate function has while its text is the key, so
/// that two equal kernels print the same.
constexpr StringLiteral kKeyName = "piper_kernel";

/// Whether `op` is worth a function: a linalg op on buffers with a region
/// or an iteration space to tile. Fills stay (LLVM turns them into memset).
bool isOutlineCandidate(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() && !isa<linalg::FillOp>(op) &&
         !mlir::piper::isBlasMatmul(op);
}

/// A private function `@piper_kernel(operands..., captured...)` holding a
/// clone of `op`, the constants in `constants` cloned before it.
func::FuncOp buildKernel(OpBuilder &b, linalg::LinalgOp op,
                         ArrayRef<Operation *> constants,
                         ArrayRef<Value> captured) {
  SmallVector<Type> argTypes(op->getOperandTypes());
  for (Value v : captured)
    argTypes.push_back(v.getType());
  Location loc = op.getLoc();
  auto fn =
      func::FuncOp::create(b, loc, kKeyName, b.getFunctionType(argTypes, {}));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  IRMapping map;
  for (auto [operand, arg] :
       llvm::zip(op->getOperands(), entry->getArguments()))
    map.map(operand, arg);
  for (auto [value, arg] : llvm::zip(
           captured, entry->getArguments().drop_front(op->getNumOperands())))
    map.map(value, arg);
  for (Operation *constant : constants)
    body.clone(*constant, map);
  body.clone(*op, map);
  func::ReturnOp::create(body, loc);
  return fn;
}

/// The text of `fn` without locations: equal for equal kernels.
std::string keyOf(func::FuncOp fn) {
  std::string text;
  llvm::raw_string_ostream os(text);
  fn->print(os, OpPrintingFlags().useLocalScope().printGenericOpForm());
  return text;
}

struct OutlineKernelsPass
    : mlir::piper::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<linalg::LinalgOp> ops;
    for (auto fn : module.getOps<func::FuncOp>())
      fn.walk([&](linalg::LinalgOp op) {
        if (isOutlineCandidate(op))
          ops.push_back(op);
      });
    // Built detached, keyed by their text; the first of each key joins the
    // module.
    llvm::StringMap<func::FuncOp> kernels;
    llvm::DenseMap<Operation *, unsigned> calls;
    OpBuilder b(&getContext());
    for (linalg::LinalgOp op : ops) {
      SetVector<Value> above;
      getUsedValuesDefinedAbove(op->getRegions(), above);
      SmallVector<Operation *> constants;
      SmallVector<Value> captured;
      for (Value v : above) {
        Operation *def = v.getDefiningOp();
        if (def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
            def->hasTrait<OpTrait::ConstantLike>())
          constants.push_back(def);
        else
          captured.push_back(v);
      }
      b.setInsertionPoint(op);
      func::FuncOp candidate = buildKernel(b, op, constants, captured);
      candidate->remove();
      std::string key = keyOf(candidate);
      func::FuncOp &kernel = kernels[key];
      if (kernel) {
        candidate.erase();
      } else {
        kernel = candidate;
        // Renamed (piper_kernel_<n>) where the name is taken.
        symbols.insert(kernel);
      }
      SmallVector<Value> args(op->getOperands());
      llvm::append_range(args, captured);
      func::CallOp::create(b, op.getLoc(), kernel, args);
      ++calls[kernel];
      op->erase();
    }
    // LLVM's inliner would copy a shared kernel back into each caller
    // (most are below its threshold once the loop nest is an OpenMP call),
    // and the compile time with it. A call costs nanoseconds against a
    // kernel's microseconds; the step time did not change (bench/README.md).
    for (auto [kernel, n] : calls)
      if (n > 1)
        kernel->setAttr("passthrough",
                        b.getArrayAttr({b.getStringAttr("noinline")}));
  }
};

} // namespace
