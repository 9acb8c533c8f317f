//===- ProgramToFunc.cpp - Device programs to functions on tensors --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-program-to-func (Passes.td): every `piper.program @p` becomes a
// public `func.func @p` of the step arguments it reads and the step results
// it writes, each as one device holds it (ReplicaLayout.h). One process runs
// every stream of a role in program order, which the partitioner made a
// topological order of all streams, so records and waits only matter to
// nonblocking collectives.
//
// This file holds the shared state, the type converter, the pass and the
// patterns of the simple instructions; ProgramLaunch.cpp lowers launches and
// ProgramComm.cpp communication.
//
//===----------------------------------------------------------------------===//

#include "ClipGradNorm.h"
#include "CommCalls.h"
#include "ConversionDriver.h"
#include "IssueOrder.h"
#include "KernelPatterns.h"
#include "LocalBodies.h"
#include "ProgramPatterns.h"

#include "piper/Conversion/Passes.h"
#include "piper/Conversion/ProgramToFunc.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <set>

namespace mlir::piper {
#define GEN_PASS_DEF_PROGRAMTOFUNCPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// The shared state and the type converter
//===----------------------------------------------------------------------===//

FailureOr<std::unique_ptr<ProgramLowering>>
ProgramLowering::create(ProgramOp program, SymbolTable &symbols,
                        const llvm::StringMap<DictionaryAttr> &roles) {
  auto step = symbols.lookup<func::FuncOp>(program.getStep());
  if (!step)
    return program.emitError()
           << "step function @" << program.getStep() << " not found";
  auto mesh = symbols.lookup<MeshOp>(program.getMesh());
  if (!mesh)
    return program.emitError() << "mesh @" << program.getMesh() << " not found";
  auto module = program->getParentOfType<ModuleOp>();
  SmallVector<std::string> batchAxes;
  if (auto axes = module->getAttrOfType<ArrayAttr>(kBatchAxesAttrName)) {
    for (Attribute a : axes)
      batchAxes.push_back(cast<StringAttr>(a).str());
  } else {
    SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
    batchAxes = collectBatchAxes(programs, mesh);
  }
  auto lowering = std::make_unique<ProgramLowering>(
      module, symbols, program, mesh, step,
      computeReplicaLayout(step, mesh, batchAxes), roles);
  std::set<int64_t> inputs, outputs;
  Block &body = program.getBody().front();
  for (Operation &op : body) {
    if (auto input = dyn_cast<InputOp>(op))
      inputs.insert(input.getIndex());
    else if (auto output = dyn_cast<OutputOp>(op)) {
      outputs.insert(output.getIndex());
      if (output.getIndex() >= step.getNumResults())
        lowering->extraResults[output.getIndex()] = output.getValue().getType();
    }
  }
  lowering->inputIndices.assign(inputs.begin(), inputs.end());
  lowering->outputIndices.assign(outputs.begin(), outputs.end());
  for (Attribute name : program.getStreams())
    lowering->streams.push_back(cast<StringAttr>(name).getValue());
  lowering->hasComm = !body.getOps<CommOp>().empty();
  return lowering;
}

Type ProgramLowering::localArgType(int64_t index) const {
  return layout.localArgType(index,
                             func::FuncOp(step).getArgumentTypes()[index]);
}

Type ProgramLowering::localResultType(int64_t index) const {
  if (Type extra = extraResults.lookup(index))
    return extra;
  return layout.localResultType(index,
                                func::FuncOp(step).getResultTypes()[index]);
}

void ProgramLowering::replace(ConversionPatternRewriter &rewriter,
                              Operation *op, ValueRange values) {
  for (auto [result, value] : llvm::zip_equal(op->getResults(), values))
    localTypes[result] = value.getType();
  rewriter.replaceOp(op, values);
}

ProgramTypeConverter::ProgramTypeConverter(ProgramLowering &lowering) {
  // Added first, tried last: a type no pattern changed stays as it is.
  addConversion([](Type type) { return type; });
  addConversion([&lowering](Value value) -> std::optional<Type> {
    auto it = lowering.localTypes.find(value);
    if (it != lowering.localTypes.end())
      return it->second;
    if (auto input = value.getDefiningOp<InputOp>())
      if (!input.getMicrobatch())
        return lowering.localArgType(input.getIndex());
    return std::nullopt;
  });
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// piper.program -> a public func.func of the local argument and result
/// types, the instructions moved into it, ending in sync_all (when there are
/// collectives) and a return that the piper.output patterns fill.
struct ProgramPattern : ProgramOpPattern<ProgramOp> {
  using ProgramOpPattern::ProgramOpPattern;

  LogicalResult
  matchAndRewrite(ProgramOp program, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> argTypes, resultTypes;
    for (int64_t index : lowering.inputIndices)
      argTypes.push_back(lowering.localArgType(index));
    for (int64_t index : lowering.outputIndices)
      resultTypes.push_back(lowering.localResultType(index));
    Location loc = program.getLoc();
    auto fn =
        func::FuncOp::create(rewriter, loc, program.getSymName(),
                             rewriter.getFunctionType(argTypes, resultTypes));
    fn->setAttr(kInputsAttrName,
                rewriter.getDenseI64ArrayAttr(lowering.inputIndices));
    fn->setAttr(kOutputsAttrName,
                rewriter.getDenseI64ArrayAttr(lowering.outputIndices));
    fn->setAttr(kRoleAttrName, program.getRole());
    // The host calls it through the C interface (descriptor pointers).
    fn->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    SmallVector<Location> locs(argTypes.size(), loc);
    Block *entry =
        rewriter.createBlock(&fn.getBody(), fn.getBody().end(), argTypes, locs);
    for (auto [i, index] : llvm::enumerate(lowering.inputIndices))
      if (auto it = lowering.layout.argShards.find(index);
          it != lowering.layout.argShards.end())
        lowering.shards[entry->getArgument(i)] = it->second;
    rewriter.inlineBlockBefore(&program.getBody().front(), entry, entry->end());

    // The step's results are read when every stream has finished.
    rewriter.setInsertionPointToEnd(entry);
    if (lowering.hasComm)
      callShim(rewriter, loc, lowering.module, "piper_comm_sync_all", {}, {},
               {});
    // Placeholders: each piper.output sets its operand to what it returns.
    SmallVector<Value> returned;
    for (int64_t index : lowering.outputIndices)
      for (auto output : entry->getOps<OutputOp>())
        if (static_cast<int64_t>(output.getIndex()) == index) {
          returned.push_back(output.getValue());
          break;
        }
    lowering.terminator = func::ReturnOp::create(rewriter, loc, returned);
    rewriter.eraseOp(program);
    return success();
  }
};

/// piper.input -> the function's argument, or the microbatch's slice of it.
struct InputPattern : ProgramOpPattern<InputOp> {
  using ProgramOpPattern::ProgramOpPattern;

  LogicalResult
  matchAndRewrite(InputOp input, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t position = llvm::find(lowering.inputIndices, input.getIndex()) -
                       lowering.inputIndices.begin();
    Value whole = input->getBlock()->getArgument(position);
    if (!input.getMicrobatch()) {
      lowering.replace(rewriter, input, whole);
      return success();
    }
    if (lowering.shards.count(whole))
      return input.emitError() << "a microbatch of a sharded argument";
    if (lowering.layout.argSplits.count(input.getIndex()))
      return input.emitError() << "a microbatch of a split argument";
    // The i-th of n contiguous slices along d, as piper.microbatch reads.
    auto type = cast<RankedTensorType>(input.getType());
    int64_t dim = *input.getDim();
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes,
        strides(type.getRank(), rewriter.getIndexAttr(1));
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    offsets[dim] =
        rewriter.getIndexAttr(*input.getMicrobatch() * type.getDimSize(dim));
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, input.getLoc(), type, whole, offsets, sizes, strides);
    lowering.replace(rewriter, input, slice);
    return success();
  }
};

/// piper.output -> the function's result of its index, which must have the
/// type a device holds for that step result.
struct OutputPattern : ProgramOpPattern<OutputOp> {
  using ProgramOpPattern::ProgramOpPattern;

  LogicalResult
  matchAndRewrite(OutputOp output, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value value = adaptor.getValue();
    Type expected = lowering.localResultType(output.getIndex());
    if (value.getType() != expected)
      return output.emitError()
             << "step result " << output.getIndex() << " is held as "
             << expected << " by each device, but the program computes "
             << value.getType()
             << " (a ZeRO stage that its collectives do not implement)";
    unsigned position = llvm::find(lowering.outputIndices, output.getIndex()) -
                        lowering.outputIndices.begin();
    rewriter.modifyOpInPlace(lowering.terminator, [&] {
      lowering.terminator->setOperand(position, value);
    });
    rewriter.eraseOp(output);
    return success();
  }
};

/// piper.sum -> one elementwise linalg.generic whose body adds the values
/// left to right, then scales (the interpreter's fixed association, rounded
/// to the element type after each operation as separate ops would be).
/// One loop and one result instead of n - 1 adds and a multiply, each with
/// its own temporary: with 16 microbatches that is 15 fewer passes over
/// every gradient, and the buffers the deallocation passes (quadratic in
/// a function's buffers) and LLVM would see. The scale is a scalar of the
/// body, so the object holds no constant of the gradient's shape.
struct SumPattern : ProgramOpPattern<SumOp> {
  using ProgramOpPattern::ProgramOpPattern;

  LogicalResult
  matchAndRewrite(SumOp sum, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange values = adaptor.getValues();
    auto type = cast<RankedTensorType>(values.front().getType());
    auto element = dyn_cast<FloatType>(type.getElementType());
    if (!element)
      return sum.emitError() << "sums float tensors only, not " << type;
    // x * 1 is x exactly: a sum without a microbatch scale multiplies by
    // nothing, and a sum of one value is that value.
    bool scaled = !sum.getScale().isExactlyValue(1.0);
    if (values.size() == 1 && !scaled) {
      lowering.replace(rewriter, sum, values.front());
      return success();
    }
    double scale = sum.getScale().convertToDouble();
    // A bf16 sum accumulates in f32 and rounds once (computeWidened).
    FloatType acc = accumulatorType(element);
    Value total = buildElementwise(
        rewriter, sum.getLoc(), values, type,
        [&](OpBuilder &b, Location loc, ValueRange elements) {
          return computeWidened(b, loc, elements, element, [&](ValueRange w) {
            Value total = w.front();
            for (Value v : w.drop_front())
              total = arith::AddFOp::create(b, loc, total, v);
            if (scaled)
              total = arith::MulFOp::create(b, loc, total,
                                            floatConstant(b, loc, acc, scale));
            return total;
          });
        });
    // ZeRO-2/3 reduce-scatter every microbatch's contribution
    // (ReshardMicrobatch.cpp): the sum of this member's chunks is its chunk
    // of the reduced sum.
    auto shard = lowering.shards.find(values.front());
    if (shard != lowering.shards.end() && llvm::all_of(values, [&](Value v) {
          return lowering.reduced.count(v);
        })) {
      FlatShard group = shard->second; // copied: inserting may rehash
      lowering.shards[total] = group;
      lowering.reduced.insert(total);
    }
    lowering.replace(rewriter, sum, total);
    return success();
  }
};

/// piper.record / piper.wait -> piper_comm_record/wait(event, stream index)
/// when nonblocking collectives make events matter; nothing otherwise
/// (everything else runs on the host in program order).
template <typename OpTy> struct EventPattern : ProgramOpPattern<OpTy> {
  using ProgramOpPattern<OpTy>::ProgramOpPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ProgramLowering &lowering = this->lowering;
    if (lowering.hasComm) {
      Location loc = op.getLoc();
      int64_t stream = llvm::find(lowering.streams, op.getStream()) -
                       lowering.streams.begin();
      StringRef name = std::is_same_v<OpTy, RecordOp> ? "piper_comm_record"
                                                      : "piper_comm_wait";
      callShim(rewriter, loc, lowering.module, name, {}, {},
               {i64Constant(rewriter, loc, op.getEvent()),
                i64Constant(rewriter, loc, stream)});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::piper::populateProgramToFuncPatterns(ProgramTypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                ProgramLowering &lowering) {
  patterns.add<ProgramPattern, InputPattern, OutputPattern, SumPattern,
               EventPattern<RecordOp>, EventPattern<WaitOp>>(
      converter, patterns.getContext(), lowering);
  populateProgramLaunchPatterns(converter, patterns, lowering);
  populateProgramCommPatterns(converter, patterns, lowering);
}

void mlir::piper::configureProgramToFuncTarget(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect,
                         bufferization::BufferizationDialect, func::FuncDialect,
                         linalg::LinalgDialect, memref::MemRefDialect,
                         tensor::TensorDialect, PiperDialect>();
  target.addIllegalOp<ProgramOp, InputOp, OutputOp, LaunchOp, SumOp, RecordOp,
                      WaitOp, SendOp, RecvOp, CommOp>();
}

LogicalResult
mlir::piper::lowerProgram(ProgramOp program, SymbolTable &symbols,
                          const llvm::StringMap<DictionaryAttr> &roles) {
  FailureOr<std::unique_ptr<ProgramLowering>> lowering =
      ProgramLowering::create(program, symbols, roles);
  if (failed(lowering))
    return failure();
  // An evaluation program has no update and joins no norm sum.
  bool clips = clipsGradNorm((*lowering)->module) && !isEvalProgram(program);
  if (clips)
    orderUpdatesLast(program);
  issueSendsEarly(program);
  (*lowering)->lazyReceives = findLazyReceives(program);
  // Nonblocking receives complete at the waits for their events.
  if (!(*lowering)->lazyReceives.empty())
    (*lowering)->hasComm = true;
  MLIRContext *context = program.getContext();
  ProgramTypeConverter converter(**lowering);
  RewritePatternSet patterns(context);
  populateProgramToFuncPatterns(converter, patterns, **lowering);
  ConversionTarget target(*context);
  configureProgramToFuncTarget(target);
  StringAttr name = program.getSymNameAttr();
  ModuleOp module = (*lowering)->module;
  if (failed(applyLowering(program, target, std::move(patterns))))
    return failure();
  if (clips && !(*lowering)->clipFinish)
    finishClipWithoutUpdates(module.lookupSymbol<func::FuncOp>(name));
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct ProgramToFuncPass
    : mlir::piper::impl::ProgramToFuncPassBase<ProgramToFuncPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
    if (programs.empty()) {
      module.emitError() << "no piper.program to lower; run --piper-partition "
                            "first";
      return signalPassFailure();
    }
    // Peers are found by name, also once their program is a function.
    llvm::StringMap<DictionaryAttr> roles;
    SetVector<Operation *> steps;
    for (ProgramOp program : programs) {
      roles[program.getSymName()] = program.getRole();
      if (Operation *step = symbols.lookup(program.getStep()))
        steps.insert(step);
    }
    for (ProgramOp program : programs)
      if (failed(lowerProgram(program, symbols, roles)))
        return signalPassFailure();
    eraseProgramSources(module, steps.getArrayRef());
  }

  /// The step functions the programs came from (with their DAGs), the
  /// meshes, bodies holding collectives that no call is left to (their
  /// local clones lower them), and the plan attributes the lowering read.
  /// Other bodies no program calls are left for symbol-dce.
  static void eraseProgramSources(ModuleOp module,
                                  ArrayRef<Operation *> steps) {
    for (Operation *step : steps)
      step->erase();
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (hasBodyCollectives(fn) &&
          SymbolTable::symbolKnownUseEmpty(fn, module))
        fn.erase();
    for (StringRef name : {kBatchAxesAttrName, kCommunicatorsAttrName})
      module->removeAttr(name);
  }
};

} // namespace
