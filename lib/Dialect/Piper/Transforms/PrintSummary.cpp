//===- PrintSummary.cpp - Readable summary of a Piper model ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The first thing a user wants to see of an annotated model is what Piper
// understood: how many devices, which links, what each device stores and
// which chunks the scheduler will see. This pass prints exactly that.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERPRINTSUMMARY
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Axis names print bare when they are identifiers, quoted otherwise, as in
/// the IR.
void printAxisName(llvm::raw_ostream &os, StringRef name) {
  bool identifier =
      !name.empty() && !llvm::isDigit(name.front()) &&
      llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
  if (identifier) {
    os << name;
    return;
  }
  os << '"';
  llvm::printEscapedString(name, os);
  os << '"';
}

void printMesh(llvm::raw_ostream &os, MeshOp mesh) {
  int64_t devices = mesh.getNumDevices();
  os << "mesh @" << mesh.getSymName() << ": " << devices
     << (devices == 1 ? " device\n" : " devices\n");
  for (MeshAxisAttr axis : mesh.getAxisList()) {
    os << "  axis ";
    printAxisName(os, axis.getName().getValue());
    os << ": size " << axis.getSize();
    if (axis.getLink()) {
      os << ", " << stringifyLinkClass(*axis.getLink());
      if (axis.getBandwidth())
        os << ", " << llvm::format("%g", axis.getBandwidth().getValueAsDouble())
           << " GB/s";
      if (axis.getLatency())
        os << ", " << llvm::format("%g", axis.getLatency().getValueAsDouble())
           << " us";
    }
    os << "\n";
  }
}

/// Prints where a placed value lives and what one device stores of it.
void printPlacement(llvm::raw_ostream &os, Operation *symbolContext,
                    const Twine &label, Type type, PlacementAttr placement) {
  os << "  " << label << " " << type << " " << placement << "\n";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  MeshOp mesh = lookupMesh(symbolContext, placement.getMesh());
  if (!tensorType || !mesh || !tensorType.hasStaticShape())
    return;
  SmallVector<int64_t> local =
      placement.getLocalShape(tensorType.getShape(), mesh);
  auto localType = RankedTensorType::get(local, tensorType.getElementType());
  os << "    per device: " << localType;
  if (!tensorType.getElementType().isIntOrFloat()) {
    os << "\n";
    return;
  }
  int64_t bytes =
      localType.getNumElements() *
      llvm::divideCeil(tensorType.getElementType().getIntOrFloatBitWidth(), 8);
  os << ", " << bytes << " bytes";
  if (placement.getZero() != 0) {
    int64_t ways = 1;
    for (StringAttr name : placement.getReplicated().getAsRange<StringAttr>())
      ways *= mesh.getAxis(name.getValue()).getSize();
    static constexpr const char *kSharded[] = {
        "", "optimizer state", "gradients and optimizer state",
        "parameters, gradients and optimizer state"};
    os << "; ZeRO-" << placement.getZero() << " shards "
       << kSharded[placement.getZero()] << " 1/" << ways;
    if (placement.getZero() == 3)
      os << " (keeps " << llvm::divideCeil(bytes, ways) << " bytes)";
  }
  os << "\n";
}

/// Prints a parameter's name and initialiser, then where it lives.
void printParam(llvm::raw_ostream &os, Operation *symbolContext, unsigned index,
                Type type, ParamAttr param) {
  std::string label;
  llvm::raw_string_ostream labelOs(label);
  labelOs << "param \"" << param.getName().getValue() << "\" "
          << stringifyInitKind(param.getInit());
  if (param.getStd())
    labelOs << "(" << llvm::format("%g", param.getStd().getValueAsDouble())
            << ")";
  labelOs << " (arg " << index << ")";
  if (!param.getPlacement()) {
    os << "  " << label << " " << type << ", replicated\n";
    return;
  }
  printPlacement(os, symbolContext, label, type, param.getPlacement());
}

/// Prints each chunk with its full tag set, indented by nesting depth.
void printChunks(llvm::raw_ostream &os, Region &region, unsigned depth) {
  for (Operation &op : region.getOps()) {
    auto annotate = dyn_cast<AnnotateOp>(op);
    if (!annotate) {
      for (Region &nested : op.getRegions())
        printChunks(os, nested, depth);
      continue;
    }
    // Top-level operations of the chunk body, the terminator excluded;
    // nested chunks are listed separately below.
    unsigned ops = 0, chunks = 0;
    for (Operation &inner : annotate.getBody().front().without_terminator())
      ++(isa<AnnotateOp>(inner) ? chunks : ops);
    os.indent(2 * depth) << "chunk {";
    llvm::interleaveComma(annotate.getAllTags(), os, [&](NamedAttribute tag) {
      os << tag.getName().getValue() << " = ";
      if (auto integer = dyn_cast<IntegerAttr>(tag.getValue()))
        os << integer.getInt();
      else
        os << tag.getValue();
    });
    os << "}";
    if (annotate.getPass())
      os << " " << stringifyPassKind(*annotate.getPass());
    os << ": " << ops << (ops == 1 ? " op" : " ops");
    if (chunks)
      os << ", " << chunks
         << (chunks == 1 ? " nested chunk" : " nested chunks");
    os << "\n";
    printChunks(os, annotate.getBody(), depth + 1);
  }
}

/// Prints the size of a training DAG: compute nodes per pass, the other
/// nodes per kind (communication, microbatch slices and sums) and edges.
void printDAG(llvm::raw_ostream &os, DAGOp dag) {
  std::map<std::string, unsigned> perPass, perKind;
  unsigned nodes = 0, dataEdges = 0, temporalEdges = 0;
  Block &block = dag.getBody().front();
  for (Operation &node : block.without_terminator()) {
    ++nodes;
    if (auto task = dyn_cast<TaskOp>(node)) {
      ++perPass[stringifyPassKind(task.getPass()).str()];
      temporalEdges += task.getAfter().size();
    } else if (auto collective = dyn_cast<CollectiveOp>(node)) {
      ++perKind[stringifyCollectiveKind(collective.getKind()).str()];
    } else if (isa<TransferOp>(node)) {
      ++perKind["transfer"];
    } else {
      ++perKind[node.getName().stripDialect().str()];
    }
    for (Value input : node.getOperands())
      dataEdges +=
          input.getDefiningOp() && input.getDefiningOp()->getBlock() == &block;
  }
  os << "  dag: " << nodes << (nodes == 1 ? " node" : " nodes") << " (";
  llvm::interleaveComma(perPass, os, [&](auto &entry) {
    os << entry.first << " " << entry.second;
  });
  if (!perKind.empty()) {
    os << "; ";
    llvm::interleaveComma(perKind, os, [&](auto &entry) {
      os << entry.first << " " << entry.second;
    });
  }
  os << "), " << dataEdges << " data edges, " << temporalEdges
     << " temporal edges\n";
}

struct PrintSummaryPass
    : public piper::impl::PiperPrintSummaryBase<PrintSummaryPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    ModuleOp module = getOperation();
    module.walk([&](MeshOp mesh) { printMesh(os, mesh); });
    module.walk([&](FunctionOpInterface fn) {
      os << "function @" << SymbolTable::getSymbolName(fn).getValue() << "\n";
      StringRef placementName = PiperDialect::getPlacementAttrName();
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        Type type = fn.getArgumentTypes()[i];
        if (auto param = fn.getArgAttrOfType<ParamAttr>(
                i, PiperDialect::getParamAttrName()))
          printParam(os, fn, i, type, param);
        else if (auto placement =
                     fn.getArgAttrOfType<PlacementAttr>(i, placementName))
          printPlacement(os, fn, "arg " + Twine(i), type, placement);
      }
      for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
        if (auto placement =
                fn.getResultAttrOfType<PlacementAttr>(i, placementName))
          printPlacement(os, fn, "result " + Twine(i), fn.getResultTypes()[i],
                         placement);
      printChunks(os, fn.getFunctionBody(), 1);
      fn.getFunctionBody().walk([&](DAGOp dag) { printDAG(os, dag); });
    });
    os.flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
