//===- ConvertToKernels.cpp - Piper ops to linalg and kernel calls --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-convert-to-kernels, on tensors, before bufferization:
//
//  - piper.annotate regions are inlined (tags matter to the DAG, not here);
//  - what maps cleanly onto linalg goes there: add/sub/mul/relu and
//    arith.addi (the AdamW step count) as elementwise linalg.generic; 2-D
//    matmul and linear (leading dims of x collapsed) as linalg.fill +
//    linalg.matmul (+ a broadcast bias add). --piper-matmul-to-blas later
//    turns each linalg.matmul into one BLAS call;
//  - everything else (norms, softmax, attention, activations with
//    transcendental functions, embedding, cross-entropy, layout, MoE
//    routing, every piper.vjp, the optimizer updates) becomes a call of the
//    C-ABI kernel library: operands go out through bufferization.to_buffer
//    as fully strided memrefs cast to unranked ones, each result is a fresh
//    memref.alloc the kernel fills, read back with bufferization.to_tensor.
//    One-shot bufferization then sees ordinary buffer code.
//
// Kernel calls are named after the op and the element type of its float
// tensors (Kernels.h documents the ABI); scalar attributes follow the
// buffers as f64 or i64.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

class Lowerer {
public:
  explicit Lowerer(ModuleOp module) : module(module), b(module.getContext()) {}

  LogicalResult run();

private:
  LogicalResult lower(Operation *op);
  LogicalResult lowerVJP(VJPOp op);

  /// f32 or f64: the element type of the op's float tensors.
  FailureOr<FloatType> floatType(Operation *op);
  static StringRef suffix(FloatType t) { return t.isF32() ? "f32" : "f64"; }

  /// Emits `call @name(buffers of operands, buffers of results, scalars)`
  /// and returns the results as tensors.
  SmallVector<Value> callKernel(Location loc, StringRef name,
                                ValueRange operands, TypeRange results,
                                ValueRange scalars);
  Value unranked(Location loc, Value memref);
  func::FuncOp declare(StringRef name, TypeRange argTypes);

  Value f64(Location loc, double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value i64(Location loc, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }

  /// Elementwise linalg.generic over same-shaped tensors.
  Value elementwise(Location loc, ValueRange inputs, Type resultType,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> fn);
  /// x [.., K] times w [K, N] (+ bias [N]) with linalg.matmul.
  Value matmul2d(Location loc, Value x, Value w, Value bias, Type resultType);

  ModuleOp module;
  OpBuilder b;
  llvm::StringMap<func::FuncOp> declared;
};

FailureOr<FloatType> Lowerer::floatType(Operation *op) {
  auto check = [&](Type type) -> std::optional<FloatType> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return std::nullopt;
    return dyn_cast<FloatType>(tensor.getElementType());
  };
  std::optional<FloatType> found;
  for (Type t : op->getOperandTypes())
    if ((found = check(t)))
      break;
  if (!found)
    for (Type t : op->getResultTypes())
      if ((found = check(t)))
        break;
  if (!found)
    return op->emitError() << "has no float tensor to pick a kernel by";
  if (!found->isF32() && !found->isF64())
    return op->emitError() << "element type " << *found
                           << " is not supported by the native lowering "
                              "(f32 and f64 are)";
  return *found;
}

func::FuncOp Lowerer::declare(StringRef name, TypeRange argTypes) {
  if (func::FuncOp fn = declared.lookup(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType(argTypes, {}));
  fn.setPrivate();
  declared[name] = fn;
  return fn;
}

Value Lowerer::unranked(Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), memref);
}

SmallVector<Value> Lowerer::callKernel(Location loc, StringRef name,
                                       ValueRange operands, TypeRange results,
                                       ValueRange scalars) {
  SmallVector<Value> args;
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    // Fully dynamic strides: operands may be slices (microbatches).
    auto layout = StridedLayoutAttr::get(
        b.getContext(), ShapedType::kDynamic,
        SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
    auto memType =
        MemRefType::get(type.getShape(), type.getElementType(), layout);
    auto buffer = bufferization::ToBufferOp::create(b, loc, memType, operand,
                                                    /*read_only=*/true);
    args.push_back(unranked(loc, buffer));
  }
  SmallVector<Value> allocs;
  for (Type result : results) {
    auto type = cast<RankedTensorType>(result);
    auto alloc = memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()));
    allocs.push_back(alloc);
    args.push_back(unranked(loc, alloc));
  }
  llvm::append_range(args, scalars);
  func::FuncOp callee = declare(name, ValueRange(args).getTypes());
  func::CallOp::create(b, loc, callee, args);
  SmallVector<Value> tensors;
  for (auto [alloc, type] : llvm::zip(allocs, results))
    tensors.push_back(bufferization::ToTensorOp::create(
        b, loc, type, alloc, /*restrict=*/true, /*writable=*/true));
  return tensors;
}

Value Lowerer::elementwise(
    Location loc, ValueRange inputs, Type resultType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  auto type = cast<RankedTensorType>(resultType);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = fn(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, v);
      });
  return generic.getResult(0);
}

Value Lowerer::matmul2d(Location loc, Value x, Value w, Value bias,
                        Type resultType) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  auto outType = cast<RankedTensorType>(resultType);
  Type elt = outType.getElementType();
  int64_t rank = xType.getRank();
  Value x2 = x;
  SmallVector<ReassociationIndices> reassoc;
  if (rank > 2) {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 1; ++i)
      lead.push_back(i);
    reassoc = {lead, {rank - 1}};
    x2 = tensor::CollapseShapeOp::create(b, loc, x, reassoc);
  }
  int64_t m = cast<RankedTensorType>(x2.getType()).getDimSize(0);
  int64_t n = wType.getDimSize(1);
  auto flatType = RankedTensorType::get({m, n}, elt);
  Value init = tensor::EmptyOp::create(b, loc, flatType.getShape(), elt);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0.0));
  Value filled =
      linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init})
          .getResult(0);
  Value out = linalg::MatmulOp::create(b, loc, TypeRange{flatType},
                                       ValueRange{x2, w}, ValueRange{filled})
                  .getResult(0);
  if (bias) {
    Value empty = tensor::EmptyOp::create(b, loc, flatType.getShape(), elt);
    AffineMap id = b.getMultiDimIdentityMap(2);
    AffineMap col =
        AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, b.getContext());
    out = linalg::GenericOp::create(
              b, loc, flatType, ValueRange{out, bias}, ValueRange{empty},
              ArrayRef<AffineMap>{id, col, id},
              ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                            utils::IteratorType::parallel},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value s = arith::AddFOp::create(nb, nl, args[0], args[1]);
                linalg::YieldOp::create(nb, nl, s);
              })
              .getResult(0);
  }
  if (rank > 2)
    out = tensor::ExpandShapeOp::create(b, loc, outType, out, reassoc);
  return out;
}

/// The permutation packed 4 bits per dim for the transpose kernels.
int64_t packPermutation(ArrayRef<int64_t> perm) {
  int64_t packed = 0;
  for (auto [i, p] : llvm::enumerate(perm))
    packed |= p << (4 * i);
  return packed;
}

LogicalResult Lowerer::lowerVJP(VJPOp op) {
  FailureOr<FloatType> elt = floatType(op);
  if (failed(elt))
    return failure();
  StringRef mnemonic = op.getOp();
  mnemonic.consume_front("piper.");
  Location loc = op.getLoc();
  DictionaryAttr attrs = op.getForwardAttrs();
  SmallVector<Value> primals(op.getPrimals());
  // The linear VJPs take x and w; dBias needs only dy.
  if (mnemonic == "linear" && primals.size() == 3)
    primals.pop_back();
  if (op.getCotangents().size() != 1)
    return op.emitError() << "expected one cotangent, got "
                          << op.getCotangents().size();
  auto intAttr = [&](StringRef key) -> std::optional<int64_t> {
    if (auto a = attrs ? attrs.getAs<IntegerAttr>(key) : IntegerAttr())
      return a.getInt();
    return std::nullopt;
  };
  auto floatAttr = [&](StringRef key, double fallback) {
    if (auto a = attrs ? attrs.getAs<FloatAttr>(key) : FloatAttr())
      return a.getValueAsDouble();
    return fallback;
  };
  SmallVector<Value> scalars;
  if (mnemonic == "rmsnorm")
    scalars.push_back(f64(loc, floatAttr("epsilon", 1e-6)));
  else if (mnemonic == "layernorm")
    scalars.push_back(f64(loc, floatAttr("epsilon", 1e-5)));
  else if (mnemonic == "attention" || mnemonic == "router" ||
           mnemonic == "dispatch") {
    StringRef key = mnemonic == "attention" ? "num_heads"
                    : mnemonic == "router"  ? "top_k"
                                            : "capacity";
    std::optional<int64_t> v = intAttr(key);
    if (!v)
      return op.emitError()
             << "forward_attrs lacks the integer '" << key << "'";
    scalars.push_back(i64(loc, *v));
  } else if (mnemonic == "transpose") {
    auto perm = attrs ? attrs.getAs<DenseI64ArrayAttr>("permutation")
                      : DenseI64ArrayAttr();
    if (!perm)
      return op.emitError() << "forward_attrs lacks the array 'permutation'";
    scalars.push_back(i64(loc, packPermutation(perm.asArrayRef())));
  }
  static const llvm::StringSet<> known = {
      "matmul",  "linear",    "add",       "sub",       "mul",
      "relu",    "gelu",      "silu",      "swiglu",    "softmax",
      "rmsnorm", "layernorm", "attention", "embedding", "cross_entropy",
      "reshape", "transpose", "router",    "dispatch",  "expert_ffn",
      "combine"};
  if (!known.contains(mnemonic))
    return op.emitError() << "no kernel for the VJP of '" << op.getOp() << "'";
  SmallVector<Value> operands(primals);
  operands.push_back(op.getCotangents()[0]);
  SmallVector<Value> results;
  for (auto [wrt, result] : llvm::zip(op.getWrt(), op.getResults())) {
    std::string name =
        ("piper_k_vjp_" + mnemonic + "_" + Twine(wrt) + "_" + suffix(*elt))
            .str();
    results.push_back(
        callKernel(loc, name, operands, result.getType(), scalars).front());
  }
  op->replaceAllUsesWith(results);
  op->erase();
  return success();
}

LogicalResult Lowerer::lower(Operation *op) {
  b.setInsertionPoint(op);
  Location loc = op->getLoc();

  if (auto addi = dyn_cast<arith::AddIOp>(op)) {
    if (!isa<RankedTensorType>(addi.getType()))
      return success();
    Value r = elementwise(loc, addi->getOperands(), addi.getType(),
                          [](OpBuilder &nb, Location nl, ValueRange a) {
                            return arith::AddIOp::create(nb, nl, a[0], a[1]);
                          });
    addi.replaceAllUsesWith(r);
    addi.erase();
    return success();
  }
  if (op->getDialect() == nullptr ||
      op->getDialect()->getNamespace() != "piper") {
    if (isa<func::FuncDialect, arith::ArithDialect, tensor::TensorDialect,
            linalg::LinalgDialect, bufferization::BufferizationDialect,
            math::MathDialect, memref::MemRefDialect>(op->getDialect()))
      return success();
    return op->emitError() << "unsupported operation '" << op->getName()
                           << "' in a chunk body: the native lowering handles "
                              "piper NN ops, piper.vjp, optimizer updates, "
                              "arith, tensor and func ops";
  }
  if (auto vjp = dyn_cast<VJPOp>(op))
    return lowerVJP(vjp);

  FailureOr<FloatType> elt = floatType(op);
  if (failed(elt))
    return failure();
  auto replace = [&](ValueRange values) {
    op->replaceAllUsesWith(values);
    op->erase();
    return success();
  };
  auto binary = [&](auto build) {
    return replace(
        elementwise(loc, op->getOperands(), op->getResultTypes()[0], build));
  };

  // Elementwise and GEMMs: linalg.
  if (isa<AddOp>(op))
    return binary([](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return arith::AddFOp::create(nb, nl, a[0], a[1]);
    });
  if (isa<SubOp>(op))
    return binary([](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return arith::SubFOp::create(nb, nl, a[0], a[1]);
    });
  if (isa<MulOp>(op))
    return binary([](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return arith::MulFOp::create(nb, nl, a[0], a[1]);
    });
  if (isa<ReluOp>(op))
    return binary([&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      // x > 0 ? x : 0, the reference's rule (the derivative's too).
      Value zero = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(*elt, 0));
      Value pos =
          arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, a[0], zero);
      return arith::SelectOp::create(nb, nl, pos, a[0], zero);
    });
  if (auto linear = dyn_cast<LinearOp>(op)) {
    auto xType = cast<RankedTensorType>(linear.getX().getType());
    if (xType.getRank() >= 2)
      return replace(matmul2d(loc, linear.getX(), linear.getW(),
                              linear.getBias(), linear.getType()));
  }
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    if (cast<RankedTensorType>(mm.getLhs().getType()).getRank() == 2 &&
        cast<RankedTensorType>(mm.getRhs().getType()).getRank() == 2)
      return replace(
          matmul2d(loc, mm.getLhs(), mm.getRhs(), Value(), mm.getType()));
  }

  // Everything else: the kernel library.
  StringRef mnemonic = op->getName().stripDialect();
  std::string base = mnemonic.str();
  SmallVector<Value> scalars;
  auto f64Attr = [&](StringRef key, double fallback) {
    if (auto a = op->getAttrOfType<FloatAttr>(key))
      return a.getValueAsDouble();
    return fallback;
  };
  auto i64Attr = [&](StringRef key) -> int64_t {
    if (auto a = op->getAttrOfType<IntegerAttr>(key))
      return a.getInt();
    return 0;
  };
  if (auto linear = dyn_cast<LinearOp>(op)) {
    if (linear.getBias())
      base = "linear_bias";
  } else if (isa<RmsNormOp>(op)) {
    scalars.push_back(f64(loc, f64Attr("epsilon", 1e-6)));
  } else if (isa<LayerNormOp>(op)) {
    scalars.push_back(f64(loc, f64Attr("epsilon", 1e-5)));
  } else if (isa<AttentionOp>(op)) {
    scalars.push_back(i64(loc, i64Attr("num_heads")));
  } else if (isa<RouterOp>(op)) {
    scalars.push_back(i64(loc, i64Attr("top_k")));
  } else if (isa<DispatchOp>(op)) {
    scalars.push_back(i64(loc, i64Attr("capacity")));
  } else if (auto t = dyn_cast<TransposeOp>(op)) {
    scalars.push_back(i64(loc, packPermutation(t.getPermutation())));
  } else if (auto sgd = dyn_cast<SgdUpdateOp>(op)) {
    scalars.push_back(f64(loc, sgd.getLrAttr().getValueAsDouble()));
    scalars.push_back(f64(loc, sgd.getMomentumAttr().getValueAsDouble()));
    scalars.push_back(f64(loc, sgd.getWeightDecayAttr().getValueAsDouble()));
  } else if (auto adamw = dyn_cast<AdamWUpdateOp>(op)) {
    scalars.push_back(f64(loc, adamw.getLrAttr().getValueAsDouble()));
    scalars.push_back(f64(loc, adamw.getBeta1Attr().getValueAsDouble()));
    scalars.push_back(f64(loc, adamw.getBeta2Attr().getValueAsDouble()));
    scalars.push_back(f64(loc, adamw.getEpsAttr().getValueAsDouble()));
    scalars.push_back(f64(loc, adamw.getWeightDecayAttr().getValueAsDouble()));
  } else if (!isa<MatmulOp, GeluOp, SiluOp, SwigluOp, SoftmaxOp, EmbeddingOp,
                  CrossEntropyOp, ReshapeOp, ExpertFfnOp, CombineOp>(op)) {
    return op->emitError() << "unsupported operation '" << op->getName()
                           << "' in a chunk body: the native lowering has no "
                              "kernel for it";
  }
  std::string name = "piper_k_" + base + "_" + suffix(*elt).str();
  return replace(
      callKernel(loc, name, op->getOperands(), op->getResultTypes(), scalars));
}

LogicalResult Lowerer::run() {
  // Inline annotate regions, innermost first.
  SmallVector<AnnotateOp> annotates;
  module.walk([&](AnnotateOp op) { annotates.push_back(op); });
  for (AnnotateOp op : annotates) {
    Block &body = op.getBody().front();
    Operation *yield = body.getTerminator();
    op->replaceAllUsesWith(yield->getOperands());
    yield->erase();
    op->getBlock()->getOperations().splice(op->getIterator(),
                                           body.getOperations());
    op->erase();
  }
  SmallVector<Operation *> ops;
  for (auto fn : module.getOps<func::FuncOp>())
    fn.walk([&](Operation *op) {
      if (op != fn.getOperation())
        ops.push_back(op);
    });
  for (Operation *op : ops)
    if (failed(lower(op)))
      return failure();
  return success();
}

struct ConvertToKernelsPass
    : PassWrapper<ConvertToKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertToKernelsPass)
  StringRef getArgument() const override { return "piper-convert-to-kernels"; }
  StringRef getDescription() const override {
    return "Lower piper ops on tensors to linalg and kernel-library calls";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                    func::FuncDialect, linalg::LinalgDialect,
                    math::MathDialect, memref::MemRefDialect,
                    tensor::TensorDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet elementwise(&getContext());
    populateElementwiseToLinalgPatterns(elementwise);
    if (failed(applyPatternsGreedily(getOperation(), std::move(elementwise))))
      return signalPassFailure();
    if (failed(Lowerer(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::piper::createConvertToKernelsPass() {
  return std::make_unique<ConvertToKernelsPass>();
}
