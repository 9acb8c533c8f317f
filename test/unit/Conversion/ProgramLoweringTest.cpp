//===- ProgramLoweringTest.cpp - The program lowering's C++ API -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What another target's lowering reuses from --piper-program-to-func
// (ProgramToFunc.h): the type converter's local types before any pattern
// ran, and the patterns driven through the public populate/target API,
// after which the converter answers with the types the patterns chose.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/ProgramToFunc.h"
#include "piper/InitAllPiper.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// ZeRO-1 over dp = 2: the parameter is whole on every device, its momentum
/// a flat chunk of ceil(3 / 2) = 2 elements; the reduce-scatter yields the
/// gradient's chunk, the update cuts the parameter to its chunk
/// (piper_comm_shard) and the all-gather makes the updated chunks whole.
constexpr StringLiteral kZero1 = R"mlir(
module attributes {piper_plan.batch_axes = ["dp"],
                   piper_plan.communicators = [[["dp"], "dp"]]} {
piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}, zero = 1>>},
                %x: tensor<3xf64>,
                %m: tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">})
    -> (tensor<3xf64> {piper.updated = "w"}, tensor<3xf64> {piper.state = #piper.state<"w", "momentum_buffer">}) {
  return %w, %m : tensor<3xf64>, tensor<3xf64>
}
func.func private @grad(%w: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %g = piper.mul %w, %x : tensor<3xf64>
  return %g : tensor<3xf64>
}
func.func private @upd(%w: tensor<3xf64>, %g: tensor<3xf64>, %m: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<3xf64>
  return %p, %b : tensor<3xf64>, tensor<3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp"] {
  %w = piper.input 0 : tensor<3xf64>
  %x = piper.input 1 : tensor<3xf64>
  %m = piper.input 2 : tensor<3xf64>
  %g = piper.launch "BW" @grad(%w, %x) on "compute" : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %r = piper.comm "rs"reduce_scatter %g over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<3xf64>
  %u:2 = piper.launch "UPD" @upd(%w, %r, %m) on "compute" : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  %a = piper.comm "ag"all_gather %u#0 over ["dp"] on "dp" {piper_plan.comm = 0 : i64} : tensor<3xf64>
  piper.output 0 %a : tensor<3xf64>
  piper.output 1 %u#1 : tensor<3xf64>
}
}
)mlir";

class ProgramLoweringTest : public ::testing::Test {
protected:
  ProgramLoweringTest() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kZero1, &context);
  }

  ProgramOp program() { return *module->getOps<ProgramOp>().begin(); }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ProgramLoweringTest, ConverterGivesStepArgumentsTheirLocalTypes) {
  ASSERT_TRUE(module);
  SymbolTable symbols(*module);
  llvm::StringMap<DictionaryAttr> roles;
  auto lowering = ProgramLowering::create(program(), symbols, roles);
  ASSERT_TRUE(succeeded(lowering));
  EXPECT_EQ((*lowering)->inputIndices, SmallVector<int64_t>({0, 1, 2}));
  EXPECT_EQ((*lowering)->outputIndices, SmallVector<int64_t>({0, 1}));
  EXPECT_TRUE((*lowering)->hasComm);

  ProgramTypeConverter converter(**lowering);
  auto f64 = Float64Type::get(&context);
  SmallVector<Type> expected = {RankedTensorType::get({3}, f64),
                                RankedTensorType::get({3}, f64),
                                RankedTensorType::get({2}, f64)};
  for (InputOp input : program().getBody().getOps<InputOp>())
    EXPECT_EQ(converter.convertType(input.getResult()),
              expected[input.getIndex()])
        << "input " << input.getIndex();
  // A type no pattern has seen is kept.
  EXPECT_EQ(converter.convertType(Type(RankedTensorType::get({7}, f64))),
            RankedTensorType::get({7}, f64));
}

TEST_F(ProgramLoweringTest, PatternsBuildTheLocalFunction) {
  ASSERT_TRUE(module);
  SymbolTable symbols(*module);
  llvm::StringMap<DictionaryAttr> roles;
  ASSERT_TRUE(succeeded(lowerProgram(program(), symbols, roles)));
  auto fn = module->lookupSymbol<func::FuncOp>("step.all");
  ASSERT_TRUE(fn);
  auto f64 = Float64Type::get(&context);
  auto whole = RankedTensorType::get({3}, f64);
  auto chunk = RankedTensorType::get({2}, f64);
  EXPECT_EQ(fn.getFunctionType(),
            FunctionType::get(&context, {whole, whole, chunk}, {whole, chunk}));
  // Every instruction was lowered; the runtime calls were declared.
  EXPECT_TRUE(module->getOps<ProgramOp>().empty());
  for (StringRef name :
       {"piper_comm_ireduce_scatter_f64", "piper_comm_shard_f64",
        "piper_comm_iall_gather_f64", "piper_comm_sync_all",
        "piper_trace_begin", "piper_trace_end"})
    EXPECT_TRUE(module->lookupSymbol<func::FuncOp>(name)) << name.str();
  EXPECT_TRUE(succeeded(verify(fn)));
}

} // namespace
