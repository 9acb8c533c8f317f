//===- ProgramToFunc.cpp - Device programs to functions on tensors --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-program-to-func: every `piper.program @p` becomes a public
// `func.func @p` whose arguments are the step arguments the program reads
// (ascending index; a microbatch input becomes a tensor.extract_slice of the
// whole argument, so the host feeds whole global tensors) and whose results
// are the step results it writes (ascending index). Launches become calls of
// the outlined bodies and `piper.sum` an ordered add chain then a scale, as
// the interpreter accumulates. One process runs every stream of a role in
// program order, which the partitioner made a topological order of all
// streams, so records and waits vanish.
//
// A send or receive becomes a call of `piper_comm_send_<t>` /
// `piper_comm_recv_<t>` (unranked memref, peer world rank, tag), C-ABI shims
// that piper-run exports and implements on the piper_rt_* runtime. The peer's
// rank is fixed here: the mesh's row-major rank of the peer role's
// coordinates, taking this role's coordinate on the axes the peer does not
// name. Only one device per role is supported (axes no role names must have
// size 1); collectives are still rejected.
//
// The step functions the programs came from (with their DAGs) and the meshes
// are erased; bodies no program calls are left for symbol-dce.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include <map>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The world rank of the device `peer` talks to from `self`: row-major over
/// the mesh axes (piper_rt_mesh_rank's order), the peer role's coordinate
/// where it names the axis, else this role's.
FailureOr<int64_t> peerRank(Operation *op, MeshOp mesh, ProgramOp self,
                            DictionaryAttr peerRole) {
  int64_t rank = 0;
  for (MeshAxisAttr axis : mesh.getAxisList()) {
    StringRef name = axis.getName();
    auto coord = peerRole.getAs<IntegerAttr>(name);
    if (!coord)
      coord = self.getRole().getAs<IntegerAttr>(name);
    if (!coord && axis.getSize() != 1)
      return op->emitError()
             << "cannot lower '" << op->getName() << "': axis '" << name
             << "' (size " << axis.getSize()
             << ") is named by neither role; the multi-rank lowering runs one "
                "device per role (no replicas yet)";
    rank = rank * axis.getSize() + (coord ? coord.getInt() : 0);
  }
  return rank;
}

/// Declares (once) the private shim `name` taking (memref<*xT>, i64, i64).
func::FuncOp declareShim(ModuleOp module, StringRef name, Type unranked) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Type i64 = b.getI64Type();
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType({unranked, i64, i64}, {}));
  fn.setPrivate();
  return fn;
}

/// "f32", "f64" or "i64": the shim suffix of a tensor's element type.
FailureOr<StringRef> commSuffix(Operation *op, Type type) {
  Type elt = cast<RankedTensorType>(type).getElementType();
  if (elt.isF32())
    return StringRef("f32");
  if (elt.isF64())
    return StringRef("f64");
  if (elt.isInteger(64))
    return StringRef("i64");
  return op->emitError() << "cannot lower '" << op->getName()
                         << "' of element type " << elt
                         << " (f32, f64 and i64 are supported)";
}

/// Builds the function of one program; fails with a diagnostic at the first
/// instruction that cannot run in one process.
LogicalResult convertProgram(ProgramOp program, SymbolTable &symbols) {
  auto step = symbols.lookup<func::FuncOp>(program.getStep());
  if (!step)
    return program.emitError()
           << "step function @" << program.getStep() << " not found";
  Block &body = program.getBody().front();

  // Arguments: distinct step-argument indices, ascending.
  std::map<int64_t, Type> inputs;
  std::map<int64_t, Type> outputs;
  for (Operation &op : body) {
    if (auto input = dyn_cast<InputOp>(op)) {
      int64_t index = input.getIndex();
      inputs[index] = step.getArgumentTypes()[index];
    } else if (auto output = dyn_cast<OutputOp>(op)) {
      outputs[output.getIndex()] = output.getValue().getType();
    }
  }
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<int64_t> inputIndices, outputIndices;
  for (auto &[index, type] : inputs) {
    inputIndices.push_back(index);
    argTypes.push_back(type);
  }
  for (auto &[index, type] : outputs) {
    outputIndices.push_back(index);
    resultTypes.push_back(type);
  }

  auto mesh = symbols.lookup<MeshOp>(program.getMesh());
  if (!mesh)
    return program.emitError() << "mesh @" << program.getMesh() << " not found";
  auto module = program->getParentOfType<ModuleOp>();

  OpBuilder builder(program);
  Location loc = program.getLoc();
  auto fn =
      func::FuncOp::create(builder, loc, program.getSymName(),
                           builder.getFunctionType(argTypes, resultTypes));
  fn->setAttr(kInputsAttrName, builder.getDenseI64ArrayAttr(inputIndices));
  fn->setAttr(kOutputsAttrName, builder.getDenseI64ArrayAttr(outputIndices));
  fn->setAttr(kRoleAttrName, program.getRole());
  // The host calls it through the C interface (descriptor pointers).
  fn->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *entry = fn.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  DenseMap<int64_t, Value> argOf;
  for (auto [i, index] : llvm::enumerate(inputIndices))
    argOf[index] = entry->getArgument(i);
  std::map<int64_t, Value> results;
  IRMapping mapping;

  for (Operation &op : body) {
    if (auto input = dyn_cast<InputOp>(op)) {
      Value whole = argOf[input.getIndex()];
      if (!input.getMicrobatch()) {
        mapping.map(input.getResult(), whole);
        continue;
      }
      // The i-th of n contiguous slices along d, as piper.microbatch reads.
      auto type = cast<RankedTensorType>(input.getType());
      int64_t dim = *input.getDim();
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        builder.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), builder.getIndexAttr(1));
      for (int64_t size : type.getShape())
        sizes.push_back(builder.getIndexAttr(size));
      offsets[dim] =
          builder.getIndexAttr(*input.getMicrobatch() * type.getDimSize(dim));
      Value slice = tensor::ExtractSliceOp::create(
          builder, input.getLoc(), type, whole, offsets, sizes, strides);
      mapping.map(input.getResult(), slice);
      continue;
    }
    if (auto output = dyn_cast<OutputOp>(op)) {
      results[output.getIndex()] = mapping.lookup(output.getValue());
      continue;
    }
    if (auto launch = dyn_cast<LaunchOp>(op)) {
      SmallVector<Value> operands;
      for (Value v : launch.getInputs())
        operands.push_back(mapping.lookup(v));
      auto call =
          func::CallOp::create(builder, launch.getLoc(), launch.getCallee(),
                               launch.getResultTypes(), operands);
      mapping.map(launch.getResults(), call.getResults());
      continue;
    }
    if (auto sum = dyn_cast<SumOp>(op)) {
      // Left to right, then scaled (the interpreter's fixed association).
      Value acc = mapping.lookup(sum.getValues().front());
      for (Value v : sum.getValues().drop_front())
        acc = AddOp::create(builder, sum.getLoc(), acc.getType(), acc,
                            mapping.lookup(v));
      auto type = cast<RankedTensorType>(acc.getType());
      auto scale = arith::ConstantOp::create(
          builder, sum.getLoc(),
          DenseElementsAttr::get(
              type, builder.getFloatAttr(type.getElementType(),
                                         sum.getScale().convertToDouble())));
      acc = MulOp::create(builder, sum.getLoc(), acc.getType(), acc, scale);
      mapping.map(sum.getResult(), acc);
      continue;
    }
    if (isa<RecordOp, WaitOp>(op))
      continue;
    if (isa<SendOp, RecvOp>(op)) {
      bool isSend = isa<SendOp>(op);
      auto peerName =
          isSend ? cast<SendOp>(op).getPeer() : cast<RecvOp>(op).getPeer();
      int64_t tag =
          isSend ? cast<SendOp>(op).getTag() : cast<RecvOp>(op).getTag();
      // The peer's role: from its program, or, when the module holds only
      // this program (piper-compile lowers each alone), from the op.
      DictionaryAttr peerRole =
          op.getAttrOfType<DictionaryAttr>(kPeerRoleAttrName);
      for (ProgramOp candidate : module.getOps<ProgramOp>())
        if (candidate.getSymName() == peerName)
          peerRole = candidate.getRole();
      if (!peerRole)
        return op.emitError() << "peer @" << peerName << " not found";
      FailureOr<int64_t> rank = peerRank(&op, mesh, program, peerRole);
      if (failed(rank))
        return failure();
      Type tensorType = isSend ? cast<SendOp>(op).getValue().getType()
                               : cast<RecvOp>(op).getResult().getType();
      FailureOr<StringRef> suffix = commSuffix(&op, tensorType);
      if (failed(suffix))
        return failure();
      auto type = cast<RankedTensorType>(tensorType);
      auto unranked = UnrankedMemRefType::get(type.getElementType(), 0);
      Location l = op.getLoc();
      Value memref;
      if (isSend) {
        // Any strides: a sent value may be a microbatch slice; the shim
        // copies it out, so the buffer may be freed right after the call.
        auto layout = StridedLayoutAttr::get(
            builder.getContext(), ShapedType::kDynamic,
            SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
        memref = bufferization::ToBufferOp::create(
            builder, l,
            MemRefType::get(type.getShape(), type.getElementType(), layout),
            mapping.lookup(cast<SendOp>(op).getValue()), /*read_only=*/true);
      } else {
        memref = memref::AllocOp::create(
            builder, l,
            MemRefType::get(type.getShape(), type.getElementType()));
      }
      Value desc = memref::CastOp::create(builder, l, unranked, memref);
      Value peerValue = arith::ConstantIntOp::create(builder, l, *rank, 64);
      Value tagValue = arith::ConstantIntOp::create(builder, l, tag, 64);
      std::string name =
          ("piper_comm_" + Twine(isSend ? "send_" : "recv_") + *suffix).str();
      func::FuncOp shim = declareShim(module, name, unranked);
      func::CallOp::create(builder, l, shim,
                           ValueRange{desc, peerValue, tagValue});
      if (!isSend)
        mapping.map(cast<RecvOp>(op).getResult(),
                    bufferization::ToTensorOp::create(builder, l, type, memref,
                                                      /*restrict=*/true,
                                                      /*writable=*/true));
      continue;
    }
    if (isa<CommOp>(op))
      return op.emitError()
             << "cannot lower '" << op.getName()
             << "' yet: collectives need the multi-rank lowering onto the "
                "piper_rt_* collectives; compile a strategy without data, "
                "tensor or expert replicas";
    return op.emitError() << "unexpected instruction in a program";
  }

  SmallVector<Value> returned;
  for (auto &[index, value] : results)
    returned.push_back(value);
  func::ReturnOp::create(builder, loc, returned);
  return success();
}

struct ProgramToFuncPass
    : PassWrapper<ProgramToFuncPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ProgramToFuncPass)
  StringRef getArgument() const override { return "piper-program-to-func"; }
  StringRef getDescription() const override {
    return "Turn each piper.program into a public func.func on tensors";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry
        .insert<func::FuncDialect, tensor::TensorDialect, arith::ArithDialect,
                bufferization::BufferizationDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
    if (programs.empty()) {
      module.emitError() << "no piper.program to lower; run --piper-partition "
                            "first";
      return signalPassFailure();
    }
    DenseSet<Operation *> steps;
    for (ProgramOp program : programs) {
      if (failed(convertProgram(program, symbols)))
        return signalPassFailure();
      if (Operation *step = symbols.lookup(program.getStep()))
        steps.insert(step);
    }
    for (ProgramOp program : programs)
      program.erase();
    for (Operation *step : steps)
      step->erase();
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::piper::createProgramToFuncPass() {
  return std::make_unique<ProgramToFuncPass>();
}
