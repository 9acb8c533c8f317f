//===- ProgramToFunc.h - Device programs as conversion patterns -*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The patterns of --piper-program-to-func (Passes.td), public so that another
// target's lowering can reuse them. One program is lowered at a time: the
// patterns share a ProgramLowering, which holds the layout its devices hold
// (ReplicaLayout.h) and what the lowering has learnt about each value (flat
// shards, reduced gradients, local clones of bodies); a ProgramTypeConverter
// gives each program value the type one device holds.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_PROGRAMTOFUNC_H
#define PIPER_CONVERSION_PROGRAMTOFUNC_H

#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <vector>

namespace mlir::piper {

/// What the patterns lowering one program share.
struct ProgramLowering {
  ProgramLowering(ModuleOp module, SymbolTable &symbols, ProgramOp program,
                  MeshOp mesh, func::FuncOp step, ReplicaLayout layout,
                  const llvm::StringMap<DictionaryAttr> &roles)
      : module(module), symbols(symbols), program(program), mesh(mesh),
        step(step), layout(std::move(layout)), roles(roles) {}

  /// The context of `program`, or a located error (no step function, no
  /// mesh). `roles` holds the role of every program of the module, by name,
  /// for peers that an earlier conversion has already replaced.
  static FailureOr<std::unique_ptr<ProgramLowering>>
  create(ProgramOp program, SymbolTable &symbols,
         const llvm::StringMap<DictionaryAttr> &roles);

  ModuleOp module;
  SymbolTable &symbols;
  ProgramOp program;
  MeshOp mesh;
  func::FuncOp step;
  ReplicaLayout layout;
  llvm::StringMap<DictionaryAttr> roles;
  /// The step arguments the program reads and the results it writes, in
  /// ascending index: the function's arguments and results.
  SmallVector<int64_t> inputIndices, outputIndices;
  /// The stream names, indexed as piper_comm_record/wait number them.
  SmallVector<StringRef> streams;
  /// Outputs past the step's results (a sampling program's logits,
  /// EvalPrograms.h): their types, held whole.
  DenseMap<int64_t, Type> extraResults;
  /// Whether the program runs collectives or nonblocking receives (then
  /// events matter).
  bool hasComm = false;
  /// The receives lowered to nonblocking ones (IssueOrder.h).
  DenseSet<Operation *> lazyReceives;

  /// Filled while lowering. Program values to the type a device holds for
  /// them (what ProgramTypeConverter answers).
  DenseMap<Value, Type> localTypes;
  /// The function's values held as flat shards.
  DenseMap<Value, FlatShard> shards;
  /// The function's values that a gradient reduction produced.
  DenseSet<Value> reduced;
  /// Launches lowered so far (the trace hooks' index).
  int64_t launchIndex = 0;
  /// The local clones of bodies, by body and argument types.
  DenseMap<std::pair<Operation *, Type>, func::FuncOp> localBodies;
  /// Clones of bodies without the arguments they do not read (ungathered
  /// ZeRO-3 parameters), by body and the dropped arguments' positions.
  std::map<std::pair<Operation *, std::vector<unsigned>>, func::FuncOp>
      prunedBodies;
  /// Gradient clipping: the step's piper_clip_finish call (ClipGradNorm.h).
  Operation *clipFinish = nullptr;
  /// The function's return, whose operands the piper.output patterns set.
  Operation *terminator = nullptr;

  /// The type a device holds for step argument `index` / result `index`.
  Type localArgType(int64_t index) const;
  Type localResultType(int64_t index) const;
  /// Replaces `op` by `values` and records their types as the local types of
  /// its results.
  void replace(ConversionPatternRewriter &rewriter, Operation *op,
               ValueRange values);
};

/// Program values to the types one device holds: a step argument's local
/// type (ReplicaLayout::localArgType), then whatever type the pattern that
/// lowered a value's producer gave it (a chunk for a reduce-scatter, a part
/// of a split expert tensor for a launch of a local clone). Other types are
/// kept.
class ProgramTypeConverter : public TypeConverter {
public:
  explicit ProgramTypeConverter(ProgramLowering &lowering);
};

/// The patterns lowering `lowering.program` to a public func.func: one per
/// instruction kind (program, input, output, launch, sum, record, wait, send,
/// recv, comm).
void populateProgramToFuncPatterns(ProgramTypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   ProgramLowering &lowering);

/// The legality of --piper-program-to-func: program instructions are
/// illegal; func, arith, tensor, linalg, bufferization, memref and the other
/// piper ops (the sum's add and mul) are legal.
void configureProgramToFuncTarget(ConversionTarget &target);

/// Lowers `program` (one of `module`'s) with the patterns above; fails with
/// one located diagnostic.
LogicalResult lowerProgram(ProgramOp program, SymbolTable &symbols,
                           const llvm::StringMap<DictionaryAttr> &roles);

} // namespace mlir::piper

#endif // PIPER_CONVERSION_PROGRAMTOFUNC_H
