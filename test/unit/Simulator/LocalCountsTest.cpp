//===- LocalCountsTest.cpp - Per-device FLOPs of sharded bodies -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The simulator counts one device's share of a tensor-parallel body
// (LocalSizes + countBody), against figures computed here by hand, and
// leaves expert parallelism's global-view figures unchanged.
//
// Tiny GPT (f64): 2 layers, T = 16 tokens (B = 2 x S = 8), H = 16, 2 heads,
// FFN 32, vocabulary 32. Its forward body, per op (2 FLOPs a multiply-add):
//
//   q, k, v, wo linears  2 x 16 x 16 x 16 = 8192 each          (matrix)
//   attention            2 B S^2 d = 2 x 2 x 64 x 16 = 4096    (matrix)
//                        2.5 B S^2 = 320                       (vector)
//   gate, up, down       2 x 16 x 32 x 16 = 16384 each         (matrix)
//   swiglu               5 x 16 x 32 = 2560                    (vector)
//   rmsnorm              4 x 256 = 1024 (2 a layer + final)    (vector)
//   add                  256 (2 a layer)                       (vector)
//   lm_head              2 x 16 x 32 x 16 = 16384              (matrix)
//   cross_entropy        5 x 16 x 32 = 2560                    (vector)
//
// A layer: matrix 3 x 8192 + 4096 + 8192 + 3 x 16384 = 86016, vector
// 2048 + 320 + 512 + 2560 = 5440. The body: matrix 2 x 86016 + 16384 =
// 188416, vector 2 x 5440 + 1024 + 2560 = 14464.
//
// Over tp = 2 (q, k, v, gate, up column-, wo, down row-parallel) every
// linear of a layer, the attention over half the heads and swiglu on half
// the channels are halved; norms, adds, head and loss are whole: a layer
// is 43008 matrix and 2048 + 160 + 512 + 1280 = 4000 vector FLOPs, the
// body 2 x 43008 + 16384 = 102400 matrix and 8000 + 3584 = 11584 vector.
//
//===----------------------------------------------------------------------===//

#include "../Common/StrategyPipeline.h"
#include "piper/Analysis/LocalSizes.h"
#include "piper/Simulator/OpCounts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

class LocalCounts : public test::StrategyPipeline {
protected:
  static TaskOp task(ModuleOp module, StringRef name) {
    TaskOp found;
    module.walk([&](TaskOp op) {
      if (op.getName() == name)
        found = op;
    });
    return found;
  }

  static func::FuncOp bodyOf(TaskOp task) {
    return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        task, task.getCalleeAttr());
  }

  /// What one device holds of each argument of `task`'s body: parameters
  /// by their placements (as the simulator's inputs), the rest whole.
  static SmallVector<Type> argTypes(TaskOp task) {
    auto step = task->getParentOfType<func::FuncOp>();
    SmallVector<Type> types;
    for (Value operand : task->getOperands()) {
      Type type = operand.getType();
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner()->getParentOp() == step)
        if (auto param = step.getArgAttrOfType<ParamAttr>(
                arg.getArgNumber(), PiperDialect::getParamAttrName()))
          type = getLocalParamType(param, type, task);
      types.push_back(type);
    }
    return types;
  }
};

constexpr const char *kTensor =
    "%all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> "
    "!transform.any_op\n"
    "%tp = transform.piper.shard %all tensor over @mesh [\"tp\"] column "
    "[\"layers.*.attn.w[qkv]\", \"layers.*.mlp.w_{gate,up}\"] row "
    "[\"layers.*.attn.wo\", \"layers.*.mlp.w_down\"] : (!transform.any_op) "
    "-> !transform.any_op";

constexpr const char *kExpert =
    "%all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> "
    "!transform.any_op\n"
    "%a2a = transform.piper.shard %all expert over @mesh [\"ep\"] : "
    "(!transform.any_op) -> !transform.any_op";

TEST_F(LocalCounts, TensorParallelForwardIsHalvedWhereSplit) {
  OwningOpRef<ModuleOp> plain =
      build({"tiny-gpt", 1, "tp=2"}, "%all = transform.piper.match_nodes {} "
                                     "in %root : (!transform.any_op) -> "
                                     "!transform.any_op");
  OwningOpRef<ModuleOp> tp = build({"tiny-gpt", 1, "tp=2"}, kTensor);
  ASSERT_TRUE(plain && tp);

  TaskOp plainF = task(*plain, "F{PP=0}");
  ASSERT_TRUE(plainF);
  LocalSizes whole(bodyOf(plainF), argTypes(plainF));
  EXPECT_FALSE(whole.isSplit());
  OpCount tp1 = countBody(bodyOf(plainF), &whole);
  EXPECT_EQ(tp1.matrixFlops, 188416);
  EXPECT_EQ(tp1.vectorFlops, 14464);
  OpCount global = countBody(bodyOf(plainF));
  EXPECT_EQ(global.bytes, tp1.bytes);

  TaskOp f = task(*tp, "F{PP=0}");
  ASSERT_TRUE(f);
  LocalSizes sizes(bodyOf(f), argTypes(f));
  EXPECT_TRUE(sizes.isSplit());
  // The global view's count is the unsharded one.
  OpCount atGlobal = countBody(bodyOf(f));
  EXPECT_EQ(atGlobal.matrixFlops, 188416);
  EXPECT_EQ(atGlobal.vectorFlops, 14464);
  OpCount tp2 = countBody(bodyOf(f), &sizes);
  EXPECT_EQ(tp2.matrixFlops, 102400);
  EXPECT_EQ(tp2.vectorFlops, 11584);
  EXPECT_LT(tp2.bytes, atGlobal.bytes);

  // Per op: a column-parallel linear, the attention and swiglu are halved
  // (divisor 2), a row-parallel linear too; its all-reduced sum and the
  // norms are whole.
  func::FuncOp body = bodyOf(f);
  int linears = 0, halved = 0;
  body.walk([&](Operation *op) {
    if (isa<LinearOp>(op)) {
      ++linears;
      halved += sizes.getFlopDivisor(op) == 2;
    }
    if (isa<AttentionOp, SwigluOp>(op)) {
      EXPECT_EQ(sizes.getFlopDivisor(op), 2);
      EXPECT_EQ(sizes.getDivisor(op->getResult(0)), 2);
    }
    if (isa<RmsNormOp, CrossEntropyOp>(op))
      EXPECT_EQ(sizes.getFlopDivisor(op), 1);
    if (auto collective = dyn_cast<CollectiveOp>(op))
      EXPECT_EQ(sizes.getDivisor(collective.getResult()), 1);
  });
  EXPECT_EQ(linears, 15);
  EXPECT_EQ(halved, 14); // all but the LM head

  // The backward halves too: BI + BW at TP2 are less than at TP1.
  for (StringRef name : {"BI{PP=0}", "BW{PP=0}"}) {
    TaskOp plainTask = task(*plain, name), tpTask = task(*tp, name);
    ASSERT_TRUE(plainTask && tpTask) << name.str();
    LocalSizes local(bodyOf(tpTask), argTypes(tpTask));
    EXPECT_LT(countBody(bodyOf(tpTask), &local).flops(),
              countBody(bodyOf(plainTask)).flops())
        << name.str();
  }
}

TEST_F(LocalCounts, ExpertParallelFiguresAreUnchanged) {
  OwningOpRef<ModuleOp> ep = build({"tiny-moe", 1, "ep=2"}, kExpert);
  ASSERT_TRUE(ep);
  int ffns = 0;
  for (StringRef name : {"F{PP=0}", "BI{PP=0}", "BW{PP=0}"}) {
    TaskOp t = task(*ep, name);
    ASSERT_TRUE(t) << name.str();
    func::FuncOp body = bodyOf(t);
    LocalSizes sizes(body, argTypes(t));
    // The expert weights are split over ep (dim 0)...
    EXPECT_TRUE(sizes.isSplit()) << name.str();
    // ...but each device runs N times the tokens on 1/N of the experts:
    // every op, expert_ffn and its vjp included, keeps its global count.
    OpCount global = countBody(body), local = countBody(body, &sizes);
    EXPECT_EQ(local.matrixFlops, global.matrixFlops) << name.str();
    EXPECT_EQ(local.vectorFlops, global.vectorFlops) << name.str();
    EXPECT_EQ(local.bytes, global.bytes) << name.str();
    body.walk([&](Operation *op) {
      if (isa<ExpertFfnOp>(op) || isa<VJPOp>(op)) {
        ffns += isa<ExpertFfnOp>(op);
        EXPECT_EQ(sizes.getFlopDivisor(op), 1);
        EXPECT_EQ(countOp(op, &sizes).flops(), countOp(op).flops());
      }
    });
  }
  EXPECT_EQ(ffns, 2); // one expert block a layer
}

} // namespace
