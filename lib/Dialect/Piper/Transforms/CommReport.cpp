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
// (N-1)/N x bytes (bytes of the full tensor); a transfer sends its bytes
// once.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERCOMMREPORT
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

int64_t bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return 0;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementType().getIntOrFloatBitWidth(), 8);
}

/// The device group of a node; unplaced nodes run on every device.
std::string formatGroup(DictionaryAttr devices) {
  if (!devices || devices.empty())
    return "all";
  std::string text = formatDeviceGroup(devices);
  return text.substr(1, text.size() - 2);
}

struct CommReportPass
    : public piper::impl::PiperCommReportBase<CommReportPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    // (group, kind, axes, stream) -> (count, bytes per device).
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    std::map<Key, std::pair<int64_t, double>> rows;
    std::map<std::string, double> perKind;
    getOperation().walk([&](Operation *op) {
      if (auto transfer = dyn_cast<TransferOp>(op)) {
        double bytes = bytesOf(transfer.getType());
        auto &row = rows[{formatGroup(transfer.getFrom()), "send", "-",
                          transfer.getStream().str()}];
        ++row.first;
        row.second += bytes;
        perKind["send"] += bytes;
        return;
      }
      auto collective = dyn_cast<CollectiveOp>(op);
      if (!collective)
        return;
      MeshOp mesh = lookupMesh(collective, collective.getMeshAttr());
      int64_t n = 1;
      std::string axes;
      for (StringRef axis :
           collective.getAxes().getAsValueRange<StringAttr>()) {
        n *= mesh.getAxis(axis).getSize();
        axes += (axes.empty() ? "" : ",") + axis.str();
      }
      double factor = double(n - 1) / double(n);
      if (collective.getKind() == CollectiveKind::AllReduce)
        factor *= 2;
      double bytes = factor * bytesOf(collective.getType());
      std::string kind = stringifyCollectiveKind(collective.getKind()).str();
      auto &row = rows[{formatGroup(collective.getDevicesAttr()), kind, axes,
                        collective.getStream().str()}];
      ++row.first;
      row.second += bytes;
      perKind[kind] += bytes;
    });
    os << "communication per device and step\n";
    os << llvm::format("%-12s %-15s %-8s %-10s %6s %14s\n", "devices", "kind",
                       "axes", "stream", "count", "bytes");
    double total = 0;
    for (auto &[key, row] : rows) {
      auto &[group, kind, axes, stream] = key;
      os << llvm::format("%-12s %-15s %-8s %-10s %6lld %14.0f\n", group.c_str(),
                         kind.c_str(), axes.c_str(), stream.c_str(),
                         (long long)row.first, row.second);
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
