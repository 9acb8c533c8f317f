//===- CommReport.cpp - Bytes moved per device and step -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a strategy costs in communication, before anything runs: for every
// transfer and collective of a training DAG, the bytes one device sends per
// step, by device group, kind, axes and stream. Collectives use the
// bandwidth-optimal ring volumes over N = the product of their axes' sizes:
// all_reduce 2 (N-1)/N x bytes, reduce_scatter, all_gather and all_to_all
// (N-1)/N x bytes; a transfer sends its bytes once.
//
// Bytes are those one device holds of the value: a parameter, or the
// gradient flowing into its update, split over other axes (tensor or expert
// parallelism) counts its per-device shard, so the data-parallel all-reduce
// of a column-parallel weight over tp = 2 moves half the weight's bytes.
// Collectives inside a task's outlined body (expert all-to-alls,
// tensor-parallel all-reduces) run once per task that calls the body:
// microbatch copies share one body, so the callers are counted, each in its
// own device group.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/CommReport.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <tuple>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERCOMMREPORT
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Bytes one device holds of what `collective` moves: the per-device shard
/// when it is (the gradient of) a parameter split over mesh axes.
double deviceBytes(CollectiveOp collective, MeshOp mesh) {
  double bytes = getTensorBytes(collective.getType());
  ParamAttr param = getCarriedParam(collective.getValue());
  if (!param)
    param = getParamOfGradient(collective.getResult());
  if (!param || !mesh)
    return bytes;
  return bytes / double(getSplitFactor(param, mesh));
}

/// The device group of a node; unplaced nodes run on every device.
std::string formatGroup(DictionaryAttr devices) {
  if (!devices || devices.empty())
    return "all";
  std::string text = formatDeviceGroup(devices);
  return text.substr(1, text.size() - 2);
}

} // namespace

int64_t mlir::piper::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return 0;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementType().getIntOrFloatBitWidth(), 8);
}

BlockArgument mlir::piper::getCarriedArgument(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto transfer = dyn_cast<TransferOp>(def))
      value = transfer.getValue();
    else if (auto collective = dyn_cast<CollectiveOp>(def))
      value = collective.getValue();
    else
      return {};
  }
  return cast<BlockArgument>(value);
}

ParamAttr mlir::piper::getCarriedParam(Value value) {
  return getArgumentParam(getCarriedArgument(value));
}

ParamAttr mlir::piper::getArgumentParam(BlockArgument arg) {
  if (!arg)
    return {};
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return fn ? fn.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                             PiperDialect::getParamAttrName())
            : ParamAttr();
}

ParamAttr mlir::piper::getParamOfGradient(Value gradient) {
  for (OpOperand &use : gradient.getUses()) {
    auto task = dyn_cast<TaskOp>(use.getOwner());
    if (!task)
      continue;
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        task, task.getCalleeAttr());
    if (!callee || callee.isExternal())
      continue;
    for (Operation *user :
         callee.getArgument(use.getOperandNumber()).getUsers()) {
      Value param;
      if (auto sgd = dyn_cast<SgdUpdateOp>(user))
        param = sgd.getParam();
      else if (auto adamw = dyn_cast<AdamWUpdateOp>(user))
        param = adamw.getParam();
      auto arg = dyn_cast_or_null<BlockArgument>(param);
      if (!arg || arg.getOwner()->getParentOp() != callee)
        continue;
      if (ParamAttr attr =
              getCarriedParam(task->getOperand(arg.getArgNumber())))
        return attr;
    }
  }
  return {};
}

int64_t mlir::piper::getSplitFactor(ParamAttr param, MeshOp mesh) {
  int64_t factor = 1;
  if (!param || !param.getPlacement() || !mesh)
    return factor;
  for (ArrayAttr axes : param.getPlacement().getDims())
    for (StringAttr axis : axes.getAsRange<StringAttr>())
      if (MeshAxisAttr meshAxis = mesh.getAxis(axis.getValue()))
        factor *= meshAxis.getSize();
  return factor;
}

SmallVector<CommVolume> mlir::piper::collectCommVolumes(Operation *root) {
  // (group, kind, axes, stream) -> (calls, bytes per device).
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::pair<int64_t, double>> rows;
  std::set<std::pair<Key, int64_t>> buckets;
  auto addCollective = [&](CollectiveOp collective, DictionaryAttr group) {
    MeshOp mesh = lookupMesh(collective, collective.getMeshAttr());
    int64_t n = 1;
    std::string axes;
    for (StringRef axis : collective.getAxes().getAsValueRange<StringAttr>()) {
      n *= mesh.getAxis(axis).getSize();
      axes += (axes.empty() ? "" : ",") + axis.str();
    }
    double factor = double(n - 1) / double(n);
    if (collective.getKind() == CollectiveKind::AllReduce)
      factor *= 2;
    Key key{formatGroup(group),
            stringifyCollectiveKind(collective.getKind()).str(), axes,
            collective.getStream().str()};
    auto &row = rows[key];
    // Collectives of one bucket are one fused call.
    if (!collective.getBucket() ||
        buckets.insert({key, *collective.getBucket()}).second)
      ++row.first;
    row.second += factor * deviceBytes(collective, mesh);
  };
  root->walk([&](DAGOp dag) {
    for (Operation &op : dag.getBody().front().without_terminator()) {
      if (auto transfer = dyn_cast<TransferOp>(op)) {
        auto &row = rows[{formatGroup(transfer.getFrom()), "send", "-",
                          transfer.getStream().str()}];
        ++row.first;
        row.second += getTensorBytes(transfer.getType());
      } else if (auto collective = dyn_cast<CollectiveOp>(op)) {
        addCollective(collective, collective.getDevicesAttr());
      } else if (auto task = dyn_cast<TaskOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            task, task.getCalleeAttr());
        if (callee && !callee.isExternal())
          callee.walk([&](CollectiveOp collective) {
            addCollective(collective, task.getDevicesAttr());
          });
      }
    }
  });
  SmallVector<CommVolume> volumes;
  for (auto &[key, row] : rows) {
    auto &[group, kind, axes, stream] = key;
    volumes.push_back({group, kind, axes, stream, row.first, row.second});
  }
  return volumes;
}

namespace {

struct CommReportPass
    : public piper::impl::PiperCommReportBase<CommReportPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    std::map<std::string, double> perKind;
    os << "communication per device and step\n";
    os << llvm::format("%-12s %-15s %-8s %-10s %6s %14s\n", "devices", "kind",
                       "axes", "stream", "count", "bytes");
    double total = 0;
    for (const CommVolume &row : collectCommVolumes(getOperation())) {
      os << llvm::format("%-12s %-15s %-8s %-10s %6lld %14.0f\n",
                         row.group.c_str(), row.kind.c_str(), row.axes.c_str(),
                         row.stream.c_str(), (long long)row.calls, row.bytes);
      perKind[row.kind] += row.bytes;
    }
    for (auto &[kind, bytes] : perKind) {
      os << llvm::format("total %-15s %14.0f\n", kind.c_str(), bytes);
      total += bytes;
    }
    os << llvm::format("total %-15s %14.0f\n", "all", total);
    os.flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
