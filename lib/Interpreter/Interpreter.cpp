//===- Interpreter.cpp - Reference interpreter of Piper models ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A tree-walking interpreter: one environment maps every SSA value to its
// runtime value; ops run in block order, `piper.annotate` bodies inline. The
// kinds of values are fixed by their types (float element -> ref::Tensor,
// integer element -> ref::IndexTensor) and checked on entry and after every
// op, together with the static dims of the declared type, so the kernels
// only ever see operands of the kinds the IR promises.
//
//===----------------------------------------------------------------------===//

#include "piper/Interpreter/Interpreter.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Reference/Kernels.h"
#include "piper/Reference/Optimizers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#include <cmath>

#include <set>

#include <string>

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<Precision> mlir::piper::parsePrecision(StringRef text) {
  if (text == "f64")
    return Precision::F64;
  if (text == "f32")
    return Precision::F32;
  if (text == "bf16-mixed")
    return Precision::BF16Mixed;
  return std::nullopt;
}

StringRef mlir::piper::stringifyPrecision(Precision precision) {
  switch (precision) {
  case Precision::F64:
    return "f64";
  case Precision::F32:
    return "f32";
  case Precision::BF16Mixed:
    return "bf16-mixed";
  }
  llvm_unreachable("unknown precision");
}

const ref::Shape &mlir::piper::getShape(const RuntimeValue &value) {
  if (const ref::Tensor *t = getIfTensor(value))
    return t->shape;
  return std::get_if<ref::IndexTensor>(&value)->shape;
}

void mlir::piper::roundToF32(ref::Tensor &t) {
  for (double &v : t.data)
    v = static_cast<double>(static_cast<float>(v));
}

float mlir::piper::roundF32ToBF16(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if (std::isnan(value))
    return llvm::bit_cast<float>((bits | 0x00400000u) & 0xffff0000u);
  // Round to nearest, ties to even, on the 16 bits that are dropped; a
  // carry into the exponent is the correct rounding up (to infinity past
  // bf16's largest finite value).
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return llvm::bit_cast<float>(bits & 0xffff0000u);
}

void mlir::piper::roundToBF16(ref::Tensor &t) {
  for (double &v : t.data)
    v = static_cast<double>(roundF32ToBF16(static_cast<float>(v)));
}

void mlir::piper::roundToStorage(ref::Tensor &t, Type declared,
                                 Precision precision) {
  if (precision == Precision::F64)
    return;
  if (precision == Precision::F32)
    return roundToF32(t);
  Type element = declared;
  if (auto shaped = dyn_cast<ShapedType>(declared))
    element = shaped.getElementType();
  if (element.isF32())
    roundToF32(t);
  else if (element.isBF16())
    roundToBF16(t);
}

namespace {

/// Float element types hold ref::Tensor; integer and index ones
/// ref::IndexTensor. Anything else (and unranked tensors) is unsupported.
enum class ValueKind { Float, Index, Unsupported };

ValueKind kindOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return ValueKind::Unsupported;
  Type element = tensor.getElementType();
  if (isa<FloatType>(element))
    return ValueKind::Float;
  if (isa<IntegerType, IndexType>(element))
    return ValueKind::Index;
  return ValueKind::Unsupported;
}

/// Whether `shape` fits `type`: same rank, equal static dims.
bool shapeFits(const ref::Shape &shape, RankedTensorType type) {
  if (static_cast<int64_t>(shape.size()) != type.getRank())
    return false;
  for (auto [actual, declared] : llvm::zip(shape, type.getShape()))
    if (!ShapedType::isDynamic(declared) && actual != declared)
      return false;
  return true;
}

/// Checks that `value` has the kind and static dims of `type`; `what` names
/// the value in the error ("argument #2", "result #0").
LogicalResult checkFits(Location loc, StringRef prefix, const Twine &what,
                        const RuntimeValue &value, Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  bool isFloat = kindOf(type) == ValueKind::Float;
  if (isFloat != (getIfTensor(value) != nullptr))
    return emitError(loc) << prefix << what << " is "
                          << (isFloat ? "an integer" : "a float")
                          << " tensor but the IR declares " << type;
  const ref::Shape &shape = getShape(value);
  bool wellFormed = isFloat ? getIfTensor(value)->isWellFormed()
                            : getIfIndexTensor(value)->isWellFormed();
  if (!wellFormed)
    return emitError(loc) << prefix << what << " is malformed: shape "
                          << ref::shapeToString(shape)
                          << " does not match its number of elements";
  if (!shapeFits(shape, tensorType))
    return emitError(loc) << prefix << what << " has shape "
                          << ref::shapeToString(shape)
                          << " but the IR declares " << type;
  return success();
}

/// The names of the forward ops `piper.vjp` can differentiate.
const llvm::StringSet<> &differentiableOpNames() {
  static const llvm::StringSet<> names = [] {
    llvm::StringSet<> set;
    for (StringRef name :
         {MatmulOp::getOperationName(),       LinearOp::getOperationName(),
          AddOp::getOperationName(),          SubOp::getOperationName(),
          MulOp::getOperationName(),          ReluOp::getOperationName(),
          GeluOp::getOperationName(),         SiluOp::getOperationName(),
          SwigluOp::getOperationName(),       SoftmaxOp::getOperationName(),
          RmsNormOp::getOperationName(),      LayerNormOp::getOperationName(),
          AttentionOp::getOperationName(),    EmbeddingOp::getOperationName(),
          CrossEntropyOp::getOperationName(), ReshapeOp::getOperationName(),
          TransposeOp::getOperationName(),    RouterOp::getOperationName(),
          DispatchOp::getOperationName(),     ExpertFfnOp::getOperationName(),
          CombineOp::getOperationName()})
      set.insert(name);
    return set;
  }();
  return names;
}

bool isForwardOp(Operation *op) {
  return isa<MatmulOp, LinearOp, AddOp, SubOp, MulOp, ReluOp, GeluOp, SiluOp,
             SwigluOp, SoftmaxOp, RmsNormOp, LayerNormOp, AttentionOp,
             EmbeddingOp, CrossEntropyOp, ReshapeOp, TransposeOp, RouterOp,
             DispatchOp, ExpertFfnOp, CombineOp, CastOp, RopeOp,
             ElementwiseOpInterface>(op);
}

/// Checks one op of the function body for `create`.
LogicalResult checkSupported(Operation *op) {
  if (isa<AnnotateOp, YieldOp, func::ReturnOp, func::CallOp, DAGOp, DAGYieldOp,
          TaskOp, TransferOp, CollectiveOp, MicrobatchOp, AccumulateOp>(op) ||
      isForwardOp(op)) {
    // Types are checked below.
  } else if (auto vjp = dyn_cast<VJPOp>(op)) {
    if (!differentiableOpNames().contains(vjp.getOp()) &&
        !ElementwiseOpInterface::lookupElementwise(vjp.getOp(),
                                                   op->getContext()))
      return op->emitError()
             << "piper.vjp: the interpreter has no reference VJP for '"
             << vjp.getOp() << "'";
  } else if (isa<SgdUpdateOp, AdamWUpdateOp>(op)) {
    // Types are checked below.
  } else if (auto addi = dyn_cast<arith::AddIOp>(op)) {
    // The optimizer pass counts AdamW steps in a tensor<i64>.
    if (kindOf(addi.getType()) != ValueKind::Index)
      return op->emitError() << "arith.addi: the interpreter adds integer "
                                "tensors, not "
                             << addi.getType();
  } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (!isa<DenseElementsAttr>(constant.getValue()) ||
        kindOf(constant.getType()) == ValueKind::Unsupported)
      return op->emitError()
             << "arith.constant: the interpreter supports dense tensor "
                "constants of floats or integers, not "
             << constant.getValue();
  } else {
    return op->emitError()
           << "unsupported operation '" << op->getName()
           << "': the interpreter runs piper NN ops, piper.vjp, "
              "piper.annotate, optimizer updates, piper.dag nodes, "
              "arith.constant and func.return";
  }
  for (Type type : op->getResultTypes())
    if (kindOf(type) == ValueKind::Unsupported)
      return op->emitError() << op->getName() << ": result type " << type
                             << " is not a ranked tensor of floats or "
                                "integers";
  return success();
}

/// The f64 value of a float constant element of any float type.
double toDouble(APFloat value) {
  bool losesInfo = false;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

class Executor {
public:
  explicit Executor(Precision precision) : precision(precision) {}

  /// Binds `value` (already checked against its type).
  void bind(Value value, RuntimeValue runtime) {
    env[value] = std::move(runtime);
  }

  /// Runs `block`; the operands of its terminator land in `terminatorValues`.
  LogicalResult runBlock(Block &block,
                         SmallVectorImpl<RuntimeValue> &terminatorValues);

private:
  LogicalResult execute(Operation &op, SmallVectorImpl<RuntimeValue> &results);
  LogicalResult runDAG(DAGOp dag, SmallVectorImpl<RuntimeValue> &results);
  LogicalResult executeConstant(arith::ConstantOp op,
                                SmallVectorImpl<RuntimeValue> &results);
  LogicalResult executeVJP(VJPOp op, SmallVectorImpl<RuntimeValue> &results);
  LogicalResult vjpOne(VJPOp op, int64_t wrt, ref::Tensor &gradient);
  /// An op with ElementwiseOpInterface, from its scalar rule.
  LogicalResult executeElementwise(Operation &op,
                                   const ElementwiseOpInterface::Concept &rule,
                                   SmallVectorImpl<RuntimeValue> &results);
  /// The VJP of such an op: dy * d(result)/d(operand wrt), elementwise.
  LogicalResult vjpElementwise(VJPOp op, int64_t wrt,
                               const ElementwiseOpInterface::Concept &rule,
                               ref::Tensor &gradient);
  /// The primals of an elementwise op's `op` as float tensors of one shape,
  /// or a located error.
  FailureOr<SmallVector<const ref::Tensor *>>
  sameShapeTensors(Operation &op, ValueRange values, StringRef what);

  const RuntimeValue &lookup(Value value) const {
    return env.find(value)->second;
  }
  /// The float tensor of `value`; the IR type guarantees the kind.
  const ref::Tensor &tensor(Value value) const {
    return *getIfTensor(lookup(value));
  }
  const ref::IndexTensor &indices(Value value) const {
    return *getIfIndexTensor(lookup(value));
  }

  /// Turns a failed kernel Status into an error at `op`. Kernel messages
  /// start with the op's mnemonic ("embedding: ..."); the error names the
  /// full op ("piper.embedding: ..."), prefixed by "piper.vjp: " for VJPs.
  LogicalResult check(Operation &op, const ref::Status &status,
                      StringRef forwardName = {});

  /// Runs a kernel with one float output and appends it to `results`.
  template <typename Kernel>
  LogicalResult single(Operation &op, SmallVectorImpl<RuntimeValue> &results,
                       Kernel &&kernel) {
    ref::Tensor out;
    if (failed(check(op, kernel(out))))
      return failure();
    results.push_back(std::move(out));
    return success();
  }

  Precision precision;
  DenseMap<Value, RuntimeValue> env;
};

LogicalResult Executor::check(Operation &op, const ref::Status &status,
                              StringRef forwardName) {
  if (status.ok())
    return success();
  StringRef name =
      forwardName.empty() ? op.getName().getStringRef() : forwardName;
  StringRef mnemonic = name;
  mnemonic.consume_front("piper.");
  StringRef message = status.message();
  std::string text = forwardName.empty() ? "" : "piper.vjp: ";
  // "embedding: ..." or "linear BI: ...": the kernel named the op already.
  StringRef rest = message;
  if (rest.consume_front(mnemonic) &&
      (rest.starts_with(":") || rest.starts_with(" ")))
    text += ("piper." + message).str();
  else
    text += (name + ": " + message).str();
  return op.emitError() << text;
}

LogicalResult
Executor::runBlock(Block &block,
                   SmallVectorImpl<RuntimeValue> &terminatorValues) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value operand : op.getOperands())
        terminatorValues.push_back(lookup(operand));
      return success();
    }
    SmallVector<RuntimeValue> results;
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      if (failed(runBlock(annotate.getBody().front(), results)))
        return failure();
    } else if (auto dag = dyn_cast<DAGOp>(op)) {
      if (failed(runDAG(dag, results)))
        return failure();
    } else if (auto collective = dyn_cast<CollectiveOp>(op)) {
      // In a task body (expert all-to-all, tensor-parallel all-reduce): in
      // the global view a value stands for all its shards and replicas, so
      // the collective is an identity, as it is between tasks.
      results.push_back(lookup(collective.getValue()));
    } else if (failed(execute(op, results))) {
      return failure();
    }
    if (results.size() != op.getNumResults())
      return op.emitError()
             << op.getName() << ": produced " << results.size()
             << " values for " << op.getNumResults() << " results";
    std::string prefix = (op.getName().getStringRef() + ": ").str();
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      RuntimeValue &value = results[index];
      if (failed(checkFits(op.getLoc(), prefix, "result #" + Twine(index),
                           value, result.getType())))
        return failure();
      if (auto *t = std::get_if<ref::Tensor>(&value))
        roundToStorage(*t, result.getType(), precision);
      bind(result, std::move(value));
    }
  }
  return block.getParentOp()->emitError() << "block without terminator";
}

/// Rows [index * n / count, (index + 1) * n / count) of `whole` along `dim`
/// (n its size there): one contiguous microbatch.
template <typename TensorT>
TensorT sliceMicrobatch(const TensorT &whole, int64_t index, int64_t count,
                        int64_t dim) {
  ref::Shape shape = whole.shape;
  int64_t rows = shape[dim] / count;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  shape[dim] = rows;
  TensorT part;
  part.shape = shape;
  part.data.reserve(size_t(outer * rows * inner));
  for (int64_t o = 0; o < outer; ++o) {
    auto begin =
        whole.data.begin() + (o * whole.shape[dim] + index * rows) * inner;
    part.data.insert(part.data.end(), begin, begin + rows * inner);
  }
  return part;
}

/// Runs the nodes of a DAG in an order that respects its data edges and its
/// temporal edges (Kahn's algorithm; ties in IR order, so runs repeat
/// exactly), each task calling its outlined body in a fresh scope.
LogicalResult Executor::runDAG(DAGOp dag,
                               SmallVectorImpl<RuntimeValue> &results) {
  Block &block = dag.getBody().front();
  SmallVector<Operation *> nodes;
  for (Operation &op : block.without_terminator())
    nodes.push_back(&op);
  DenseMap<Operation *, unsigned> indexOf;
  llvm::StringMap<unsigned> byName;
  for (auto [i, node] : llvm::enumerate(nodes)) {
    indexOf[node] = i;
    if (auto task = dyn_cast<TaskOp>(node))
      byName[task.getName()] = i;
  }
  std::vector<SmallVector<unsigned>> successors(nodes.size());
  std::vector<unsigned> pending(nodes.size(), 0);
  for (auto [i, node] : llvm::enumerate(nodes)) {
    SmallVector<unsigned> preds;
    for (Value input : node->getOperands())
      if (auto it = indexOf.find(input.getDefiningOp()); it != indexOf.end())
        preds.push_back(it->second);
    if (auto task = dyn_cast<TaskOp>(node))
      for (StringRef before : task.getAfter().getAsValueRange<StringAttr>())
        preds.push_back(byName.lookup(before));
    for (unsigned p : preds) {
      successors[p].push_back(i);
      ++pending[i];
    }
  }
  std::set<unsigned> ready;
  for (unsigned i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0)
      ready.insert(i);
  unsigned done = 0;
  while (!ready.empty()) {
    unsigned i = *ready.begin();
    ready.erase(ready.begin());
    if (auto transfer = dyn_cast<TransferOp>(nodes[i])) {
      // Moving a value between device groups does not change it.
      bind(transfer.getResult(), lookup(transfer.getValue()));
    } else if (auto microbatch = dyn_cast<MicrobatchOp>(nodes[i])) {
      bind(microbatch.getResult(),
           std::visit(
               [&](const auto &whole) -> RuntimeValue {
                 return sliceMicrobatch(whole, microbatch.getIndex(),
                                        microbatch.getCount(),
                                        microbatch.getDim());
               },
               lookup(microbatch.getValue())));
    } else if (auto accumulate = dyn_cast<AccumulateOp>(nodes[i])) {
      // Left to right, then scaled: a fixed association, so runs repeat.
      ref::Tensor sum = tensor(accumulate.getValues().front());
      for (Value value : accumulate.getValues().drop_front()) {
        const ref::Tensor &next = tensor(value);
        for (size_t k = 0; k < sum.data.size(); ++k)
          sum.data[k] += next.data[k];
      }
      double scale = accumulate.getScale().convertToDouble();
      for (double &x : sum.data)
        x *= scale;
      roundToStorage(sum, accumulate.getType(), precision);
      bind(accumulate.getResult(), std::move(sum));
    } else if (auto collective = dyn_cast<CollectiveOp>(nodes[i])) {
      // In the global view a value already stands for all its replicas:
      // the gradient of the whole batch is the sum over data-parallel
      // shards, a gathered parameter is the parameter.
      bind(collective.getResult(), lookup(collective.getValue()));
    } else {
      auto task = cast<TaskOp>(nodes[i]);
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          task, task.getCalleeAttr());
      Executor body(precision);
      for (auto [arg, input] :
           llvm::zip(callee.getArguments(), task.getInputs()))
        body.bind(arg, lookup(input));
      SmallVector<RuntimeValue> outputs;
      if (failed(body.runBlock(callee.getBody().front(), outputs)))
        return task.emitError()
               << "piper-interp: in node '" << task.getName() << "'";
      for (auto [result, value] : llvm::zip(task.getOutputs(), outputs))
        bind(result, std::move(value));
    }
    ++done;
    for (unsigned s : successors[i])
      if (--pending[s] == 0)
        ready.insert(s);
  }
  if (done != nodes.size())
    return dag.emitError() << "piper-interp: the DAG's edges form a cycle; "
                           << nodes.size() - done << " nodes never ran";
  for (Value operand : block.getTerminator()->getOperands())
    results.push_back(lookup(operand));
  return success();
}

LogicalResult
Executor::executeConstant(arith::ConstantOp op,
                          SmallVectorImpl<RuntimeValue> &results) {
  auto attr = cast<DenseElementsAttr>(op.getValue());
  auto type = cast<RankedTensorType>(attr.getType());
  ref::Shape shape(type.getShape().begin(), type.getShape().end());
  if (isa<FloatType>(type.getElementType())) {
    ref::Tensor t;
    t.shape = shape;
    t.data.reserve(attr.getNumElements());
    for (APFloat value : attr.getValues<APFloat>())
      t.data.push_back(toDouble(value));
    results.push_back(std::move(t));
    return success();
  }
  ref::IndexTensor t;
  t.shape = shape;
  t.data.reserve(attr.getNumElements());
  bool isBool = type.getElementType().isInteger(1);
  for (APInt value : attr.getValues<APInt>())
    t.data.push_back(isBool ? static_cast<int64_t>(value.getZExtValue())
                            : value.getSExtValue());
  results.push_back(std::move(t));
  return success();
}

LogicalResult Executor::execute(Operation &op,
                                SmallVectorImpl<RuntimeValue> &results) {
  using Out = ref::Tensor;
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](arith::ConstantOp o) { return executeConstant(o, results); })
      .Case([&](VJPOp o) { return executeVJP(o, results); })
      .Case([&](func::CallOp o) -> LogicalResult {
        // Checked at creation: the callee has a single-block body.
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            o, o.getCalleeAttr());
        Executor body(precision);
        for (auto [arg, input] :
             llvm::zip(callee.getArguments(), o.getOperands()))
          body.bind(arg, lookup(input));
        return body.runBlock(callee.getBody().front(), results);
      })
      .Case([&](MatmulOp o) {
        return single(op, results, [&](Out &out) {
          return ref::matmul(tensor(o.getLhs()), tensor(o.getRhs()), out);
        });
      })
      .Case([&](LinearOp o) {
        return single(op, results, [&](Out &out) {
          const ref::Tensor *bias =
              o.getBias() ? &tensor(o.getBias()) : nullptr;
          return ref::linear(tensor(o.getX()), tensor(o.getW()), bias, out);
        });
      })
      .Case([&](AddOp o) {
        return single(op, results, [&](Out &out) {
          return ref::add(tensor(o.getLhs()), tensor(o.getRhs()), out);
        });
      })
      .Case([&](SubOp o) {
        return single(op, results, [&](Out &out) {
          return ref::sub(tensor(o.getLhs()), tensor(o.getRhs()), out);
        });
      })
      .Case([&](MulOp o) {
        return single(op, results, [&](Out &out) {
          return ref::mul(tensor(o.getLhs()), tensor(o.getRhs()), out);
        });
      })
      .Case([&](ReluOp o) {
        return single(op, results, [&](Out &out) {
          return ref::relu(tensor(o.getX()), out);
        });
      })
      .Case([&](GeluOp o) {
        return single(op, results, [&](Out &out) {
          return ref::gelu(tensor(o.getX()), out);
        });
      })
      .Case([&](SiluOp o) {
        return single(op, results, [&](Out &out) {
          return ref::silu(tensor(o.getX()), out);
        });
      })
      .Case([&](SwigluOp o) {
        return single(op, results, [&](Out &out) {
          return ref::swiglu(tensor(o.getGate()), tensor(o.getUp()), out);
        });
      })
      .Case([&](SoftmaxOp o) {
        return single(op, results, [&](Out &out) {
          return ref::softmax(tensor(o.getX()), out);
        });
      })
      .Case([&](RmsNormOp o) {
        return single(op, results, [&](Out &out) {
          return ref::rmsnorm(tensor(o.getX()), tensor(o.getW()),
                              o.getEpsilonAttr().getValueAsDouble(), out);
        });
      })
      .Case([&](LayerNormOp o) {
        return single(op, results, [&](Out &out) {
          return ref::layernorm(tensor(o.getX()), tensor(o.getW()),
                                tensor(o.getB()),
                                o.getEpsilonAttr().getValueAsDouble(), out);
        });
      })
      .Case([&](AttentionOp o) {
        return single(op, results, [&](Out &out) {
          return ref::attention(tensor(o.getQ()), tensor(o.getK()),
                                tensor(o.getV()), o.getNumHeadsAttr().getInt(),
                                out, o.getNumKvHeads().value_or(0));
        });
      })
      .Case([&](RopeOp o) {
        return single(op, results, [&](Out &out) {
          return ref::rope(tensor(o.getX()), o.getHeadDim(),
                           o.getTheta().convertToDouble(), o.getInverse(), out,
                           o.getOffset(), o.getRotaryDim().value_or(0));
        });
      })
      .Case([&](EmbeddingOp o) {
        return single(op, results, [&](Out &out) {
          return ref::embedding(tensor(o.getTable()), indices(o.getIds()), out);
        });
      })
      .Case([&](CrossEntropyOp o) {
        return single(op, results, [&](Out &out) {
          return ref::crossEntropy(tensor(o.getLogits()),
                                   indices(o.getLabels()), out);
        });
      })
      .Case([&](CastOp o) -> LogicalResult {
        // The value itself; runBlock rounds it to the declared type.
        results.push_back(tensor(o.getX()));
        return success();
      })
      .Case([&](ReshapeOp o) {
        auto type = cast<RankedTensorType>(o.getType());
        ref::Shape shape(type.getShape().begin(), type.getShape().end());
        return single(op, results, [&](Out &out) {
          return ref::reshape(tensor(o.getX()), shape, out);
        });
      })
      .Case([&](TransposeOp o) {
        std::vector<int64_t> perm(o.getPermutation().begin(),
                                  o.getPermutation().end());
        return single(op, results, [&](Out &out) {
          return ref::transpose(tensor(o.getX()), perm, out);
        });
      })
      .Case([&](RouterOp o) -> LogicalResult {
        ref::Tensor weights;
        ref::IndexTensor chosen;
        if (failed(check(op, ref::router(tensor(o.getX()), tensor(o.getW()),
                                         o.getTopKAttr().getInt(), weights,
                                         chosen))))
          return failure();
        results.push_back(std::move(weights));
        results.push_back(std::move(chosen));
        return success();
      })
      .Case([&](DispatchOp o) -> LogicalResult {
        int64_t experts = cast<RankedTensorType>(o.getType()).getDimSize(0);
        if (ShapedType::isDynamic(experts))
          return op.emitError()
                 << "piper.dispatch: the number of experts (dim 0 of the "
                    "result type) must be static to interpret the op";
        return single(op, results, [&](Out &out) {
          return ref::dispatch(tensor(o.getX()), indices(o.getIndices()),
                               experts, o.getCapacityAttr().getInt(), out);
        });
      })
      .Case([&](ExpertFfnOp o) {
        return single(op, results, [&](Out &out) {
          return ref::expertFfn(tensor(o.getBuf()), tensor(o.getWGate()),
                                tensor(o.getWUp()), tensor(o.getWDown()), out);
        });
      })
      .Case([&](CombineOp o) -> LogicalResult {
        const ref::Tensor &y = tensor(o.getY());
        if (y.rank() != 3)
          return op.emitError()
                 << "piper.combine: y has shape " << ref::shapeToString(y.shape)
                 << "; expected rank 3";
        return single(op, results, [&](Out &out) {
          return ref::combine(y, tensor(o.getWeights()),
                              indices(o.getIndices()), y.shape[1], out);
        });
      })
      .Case([&](SgdUpdateOp o) -> LogicalResult {
        ref::SgdConfig config;
        config.lr = o.getLrAttr().getValueAsDouble();
        config.momentum = o.getMomentumAttr().getValueAsDouble();
        config.weightDecay = o.getWeightDecayAttr().getValueAsDouble();
        ref::Tensor param = tensor(o.getParam());
        ref::Tensor buffer = tensor(o.getMomentumBuffer());
        if (failed(check(
                op, ref::sgdStep(config, param, tensor(o.getGrad()), buffer))))
          return failure();
        results.push_back(std::move(param));
        results.push_back(std::move(buffer));
        return success();
      })
      .Case([&](AdamWUpdateOp o) -> LogicalResult {
        ref::AdamWConfig config;
        config.lr = o.getLrAttr().getValueAsDouble();
        config.beta1 = o.getBeta1Attr().getValueAsDouble();
        config.beta2 = o.getBeta2Attr().getValueAsDouble();
        config.eps = o.getEpsAttr().getValueAsDouble();
        config.weightDecay = o.getWeightDecayAttr().getValueAsDouble();
        const ref::IndexTensor &step = indices(o.getStep());
        if (step.data.size() != 1)
          return op.emitError() << "piper.adamw_update: step must hold one "
                                   "value";
        ref::Tensor param = tensor(o.getParam());
        ref::Tensor m = tensor(o.getExpAvg());
        ref::Tensor v = tensor(o.getExpAvgSq());
        if (failed(check(op, ref::adamwStep(config, step.data[0], param,
                                            tensor(o.getGrad()), m, v))))
          return failure();
        results.push_back(std::move(param));
        results.push_back(std::move(m));
        results.push_back(std::move(v));
        return success();
      })
      .Case([&](arith::AddIOp o) -> LogicalResult {
        const ref::IndexTensor &lhs = indices(o.getLhs());
        const ref::IndexTensor &rhs = indices(o.getRhs());
        if (lhs.shape != rhs.shape)
          return op.emitError()
                 << "arith.addi: shapes " << ref::shapeToString(lhs.shape)
                 << " and " << ref::shapeToString(rhs.shape) << " differ";
        ref::IndexTensor sum = lhs;
        for (size_t i = 0; i < sum.data.size(); ++i)
          sum.data[i] =
              static_cast<int64_t>(static_cast<uint64_t>(lhs.data[i]) +
                                   static_cast<uint64_t>(rhs.data[i]));
        results.push_back(std::move(sum));
        return success();
      })
      .Default([&](Operation *) -> LogicalResult {
        if (const ElementwiseOpInterface::Concept *rule =
                op.getName().getInterface<ElementwiseOpInterface>())
          return executeElementwise(op, *rule, results);
        return op.emitError()
               << "unsupported operation '" << op.getName() << "'";
      });
}

FailureOr<SmallVector<const ref::Tensor *>>
Executor::sameShapeTensors(Operation &op, ValueRange values, StringRef what) {
  SmallVector<const ref::Tensor *> tensors;
  for (auto [index, value] : llvm::enumerate(values)) {
    const ref::Tensor *t = getIfTensor(lookup(value));
    if (!t)
      return op.emitError()
             << what << " #" << index << " must be a float tensor";
    if (!tensors.empty() && t->shape != tensors.front()->shape)
      return op.emitError() << what << " #" << index << " has shape "
                            << ref::shapeToString(t->shape) << ", expected "
                            << ref::shapeToString(tensors.front()->shape);
    tensors.push_back(t);
  }
  return tensors;
}

LogicalResult
Executor::executeElementwise(Operation &op,
                             const ElementwiseOpInterface::Concept &rule,
                             SmallVectorImpl<RuntimeValue> &results) {
  FailureOr<SmallVector<const ref::Tensor *>> in =
      sameShapeTensors(op, op.getOperands(), "operand");
  if (failed(in) || in->empty())
    return failure();
  ref::Tensor out;
  out.shape = in->front()->shape;
  out.data.resize(in->front()->data.size());
  SmallVector<double> x(in->size());
  for (size_t i = 0; i < out.data.size(); ++i) {
    for (auto [k, t] : llvm::enumerate(*in))
      x[k] = t->data[i];
    out.data[i] = rule.evaluateScalar(x);
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult
Executor::vjpElementwise(VJPOp op, int64_t wrt,
                         const ElementwiseOpInterface::Concept &rule,
                         ref::Tensor &gradient) {
  Operation &raw = *op.getOperation();
  FailureOr<SmallVector<const ref::Tensor *>> in =
      sameShapeTensors(raw, op.getPrimals(), "primal");
  if (failed(in) || in->empty())
    return failure();
  if (op.getCotangents().size() != 1)
    return op.emitError() << "piper.vjp of " << op.getOp()
                          << ": expected 1 cotangent, got "
                          << op.getCotangents().size();
  const ref::Tensor *dy = getIfTensor(lookup(op.getCotangents()[0]));
  if (!dy || dy->shape != in->front()->shape)
    return op.emitError() << "piper.vjp of " << op.getOp()
                          << ": the cotangent must be a float tensor of the "
                             "primals' shape";
  if (wrt < 0 || wrt >= static_cast<int64_t>(in->size()))
    return op.emitError() << "piper.vjp of " << op.getOp()
                          << ": there is no gradient with respect to operand #"
                          << wrt;
  gradient.shape = dy->shape;
  gradient.data.resize(dy->data.size());
  SmallVector<double> x(in->size());
  for (size_t i = 0; i < dy->data.size(); ++i) {
    for (auto [k, t] : llvm::enumerate(*in))
      x[k] = t->data[i];
    gradient.data[i] = dy->data[i] * rule.evaluatePartial(x, wrt);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// piper.vjp
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeVJP(VJPOp op,
                                   SmallVectorImpl<RuntimeValue> &results) {
  for (int64_t wrt : op.getWrt()) {
    ref::Tensor gradient;
    if (failed(vjpOne(op, wrt, gradient)))
      return failure();
    results.push_back(std::move(gradient));
  }
  return success();
}

LogicalResult Executor::vjpOne(VJPOp op, int64_t wrt, ref::Tensor &gradient) {
  Operation &raw = *op.getOperation();
  StringRef name = op.getOp();
  StringRef mnemonic = name;
  mnemonic.consume_front("piper.");
  OperandRange primals = op.getPrimals();
  OperandRange cotangents = op.getCotangents();
  DictionaryAttr attrs = op.getForwardAttrs();
  auto header = [&]() {
    return op.emitError() << "piper.vjp of " << name << ": ";
  };

  // Arity and kinds of the forward operands (F = float, I = integer).
  static const llvm::StringMap<StringRef> signatures = {
      {"matmul", "FF"},     {"linear", "FF"},       {"add", "FF"},
      {"sub", "FF"},        {"mul", "FF"},          {"relu", "F"},
      {"gelu", "F"},        {"silu", "F"},          {"swiglu", "FF"},
      {"softmax", "F"},     {"rmsnorm", "FF"},      {"layernorm", "FFF"},
      {"attention", "FFF"}, {"embedding", "FI"},    {"cross_entropy", "FI"},
      {"reshape", "F"},     {"transpose", "F"},     {"router", "FF"},
      {"dispatch", "FI"},   {"expert_ffn", "FFFF"}, {"combine", "FFI"}};
  StringRef signature = signatures.lookup(mnemonic);
  // Ops with a reference VJP keep it (the interpreter is the reference the
  // native rules are checked against); others are evaluated from their
  // ElementwiseOpInterface rule.
  if (signature.empty())
    if (const ElementwiseOpInterface::Concept *rule =
            ElementwiseOpInterface::lookupElementwise(name, op.getContext()))
      return vjpElementwise(op, wrt, *rule, gradient);
  size_t expected = signature.size();
  // linear takes an optional bias.
  bool arityOk = primals.size() == expected ||
                 (mnemonic == "linear" && primals.size() == 3);
  if (!arityOk)
    return header() << "expected " << expected
                    << (mnemonic == "linear" ? " or 3" : "") << " primals, got "
                    << primals.size();
  for (auto [index, primal] : llvm::enumerate(primals)) {
    char kind = index < signature.size() ? signature[index] : 'F';
    bool isFloat = getIfTensor(lookup(primal)) != nullptr;
    if (isFloat != (kind == 'F'))
      return header() << "primal #" << index << " must be "
                      << (kind == 'F' ? "a float" : "an integer") << " tensor";
  }
  if (cotangents.size() != 1)
    return header() << "expected 1 cotangent (of the float result), got "
                    << cotangents.size();
  if (!getIfTensor(lookup(cotangents[0])))
    return header() << "the cotangent must be a float tensor";
  if (wrt < 0 || wrt >= static_cast<int64_t>(primals.size()) ||
      (static_cast<size_t>(wrt) < signature.size() && signature[wrt] == 'I'))
    return header() << "there is no gradient with respect to operand #" << wrt;

  auto P = [&](unsigned i) -> const ref::Tensor & {
    return tensor(primals[i]);
  };
  auto I = [&](unsigned i) -> const ref::IndexTensor & {
    return indices(primals[i]);
  };
  const ref::Tensor &dy = tensor(cotangents[0]);
  auto intAttr = [&](StringRef key) -> FailureOr<int64_t> {
    if (auto attr = attrs.getAs<IntegerAttr>(key))
      return attr.getInt();
    return header() << "forward_attrs lacks the integer '" << key << "'";
  };
  auto floatAttr = [&](StringRef key, double fallback) {
    if (auto attr = attrs.getAs<FloatAttr>(key))
      return attr.getValueAsDouble();
    return fallback;
  };
  auto run = [&](const ref::Status &status) {
    return check(raw, status, name);
  };
  ref::Tensor unused, unused2;

  if (mnemonic == "matmul")
    return run(wrt == 0
                   ? ref::matmulBackward(P(0), P(1), dy, gradient, unused)
                   : ref::matmulBackward(P(0), P(1), dy, unused, gradient));
  if (mnemonic == "linear") {
    if (wrt == 0)
      return run(ref::linearBackwardInput(P(0), P(1), dy, gradient));
    if (wrt == 1)
      return run(ref::linearBackwardWeight(P(0), P(1), dy, gradient, nullptr));
    return run(ref::linearBackwardWeight(P(0), P(1), dy, unused, &gradient));
  }
  if (mnemonic == "add" || mnemonic == "sub" || mnemonic == "mul" ||
      mnemonic == "swiglu") {
    ref::Tensor &dLhs = wrt == 0 ? gradient : unused;
    ref::Tensor &dRhs = wrt == 1 ? gradient : unused;
    if (mnemonic == "add")
      return run(ref::addBackward(P(0), P(1), dy, dLhs, dRhs));
    if (mnemonic == "sub")
      return run(ref::subBackward(P(0), P(1), dy, dLhs, dRhs));
    if (mnemonic == "mul")
      return run(ref::mulBackward(P(0), P(1), dy, dLhs, dRhs));
    return run(ref::swigluBackward(P(0), P(1), dy, dLhs, dRhs));
  }
  if (mnemonic == "relu")
    return run(ref::reluBackward(P(0), dy, gradient));
  if (mnemonic == "gelu")
    return run(ref::geluBackward(P(0), dy, gradient));
  if (mnemonic == "silu")
    return run(ref::siluBackward(P(0), dy, gradient));
  if (mnemonic == "softmax")
    return run(ref::softmaxBackward(P(0), dy, gradient));
  if (mnemonic == "rmsnorm") {
    // The defaults of RmsNormOp's and LayerNormOp's `epsilon` (PiperNNOps.td):
    // an attribute at its default value may be absent from forward_attrs.
    double eps = floatAttr("epsilon", 1e-6);
    if (wrt == 0)
      return run(ref::rmsnormBackwardInput(P(0), P(1), eps, dy, gradient));
    return run(ref::rmsnormBackwardWeight(P(0), P(1), eps, dy, gradient));
  }
  if (mnemonic == "layernorm") {
    double eps = floatAttr("epsilon", 1e-5);
    if (wrt == 0)
      return run(
          ref::layernormBackwardInput(P(0), P(1), P(2), eps, dy, gradient));
    ref::Tensor &dw = wrt == 1 ? gradient : unused;
    ref::Tensor &db = wrt == 2 ? gradient : unused2;
    return run(ref::layernormBackwardWeight(P(0), P(1), P(2), eps, dy, dw, db));
  }
  if (mnemonic == "attention") {
    FailureOr<int64_t> heads = intAttr("num_heads");
    if (failed(heads))
      return failure();
    auto kvHeads = attrs.getAs<IntegerAttr>("num_kv_heads");
    ref::Tensor dq, dk, dv;
    if (failed(run(ref::attentionBackward(P(0), P(1), P(2), *heads, dy, dq, dk,
                                          dv, kvHeads ? kvHeads.getInt() : 0))))
      return failure();
    gradient = std::move(wrt == 0 ? dq : wrt == 1 ? dk : dv);
    return success();
  }
  if (mnemonic == "embedding")
    return run(ref::embeddingBackwardWeight(P(0), I(1), dy, gradient));
  if (mnemonic == "cross_entropy")
    return run(ref::crossEntropyBackward(P(0), I(1), dy, gradient));
  if (mnemonic == "reshape")
    return run(ref::reshapeBackward(P(0), dy.shape, dy, gradient));
  if (mnemonic == "transpose") {
    auto perm = attrs.getAs<DenseI64ArrayAttr>("permutation");
    if (!perm)
      return header() << "forward_attrs lacks the array 'permutation'";
    std::vector<int64_t> permutation(perm.asArrayRef().begin(),
                                     perm.asArrayRef().end());
    return run(ref::transposeBackward(P(0), permutation, dy, gradient));
  }
  if (mnemonic == "router") {
    FailureOr<int64_t> k = intAttr("top_k");
    if (failed(k))
      return failure();
    if (wrt == 0)
      return run(ref::routerBackwardInput(P(0), P(1), *k, dy, gradient));
    return run(ref::routerBackwardWeight(P(0), P(1), *k, dy, gradient));
  }
  if (mnemonic == "dispatch") {
    FailureOr<int64_t> capacity = intAttr("capacity");
    if (failed(capacity))
      return failure();
    if (dy.rank() != 3)
      return header() << "the cotangent has shape "
                      << ref::shapeToString(dy.shape)
                      << "; expected [experts, capacity, hidden]";
    return run(ref::dispatchBackward(P(0), I(1), dy.shape[0], *capacity, dy,
                                     gradient));
  }
  if (mnemonic == "expert_ffn") {
    if (wrt == 0)
      return run(
          ref::expertFfnBackwardInput(P(0), P(1), P(2), P(3), dy, gradient));
    ref::Tensor dGate, dUp, dDown;
    if (failed(run(ref::expertFfnBackwardWeight(P(0), P(1), P(2), P(3), dy,
                                                dGate, dUp, dDown))))
      return failure();
    gradient = std::move(wrt == 1 ? dGate : wrt == 2 ? dUp : dDown);
    return success();
  }
  if (mnemonic == "combine") {
    const ref::Tensor &y = P(0);
    if (y.rank() != 3)
      return header() << "y has shape " << ref::shapeToString(y.shape)
                      << "; expected rank 3";
    ref::Tensor &dY = wrt == 0 ? gradient : unused;
    ref::Tensor &dWeights = wrt == 1 ? gradient : unused2;
    return run(
        ref::combineBackward(y, P(1), I(2), y.shape[1], dy, dY, dWeights));
  }
  return header() << "no reference VJP";
}

} // namespace

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

FailureOr<Interpreter> Interpreter::create(func::FuncOp fn,
                                           Precision precision) {
  if (fn.isExternal())
    return fn.emitError() << "piper-interp: @" << fn.getSymName()
                          << " has no body to interpret";
  if (!fn.getBody().hasOneBlock())
    return fn.emitError() << "piper-interp: @" << fn.getSymName()
                          << " has several blocks; the interpreter runs "
                             "single-block functions";
  // The executor relies on the verifier's guarantees (operand kinds, yield
  // types); IR built in memory may not have been verified yet.
  if (failed(verify(fn)))
    return failure();
  for (BlockArgument arg : fn.getArguments())
    if (kindOf(arg.getType()) == ValueKind::Unsupported)
      return emitError(arg.getLoc())
             << "piper-interp: argument #" << arg.getArgNumber() << " of @"
             << fn.getSymName() << " has type " << arg.getType()
             << "; expected a ranked tensor of floats or integers";
  // The function and every body its DAG tasks call (transitively).
  SmallVector<func::FuncOp> worklist{fn};
  DenseSet<Operation *> seen{fn};
  while (!worklist.empty()) {
    func::FuncOp current = worklist.pop_back_val();
    WalkResult walk = current.getBody().walk([&](Operation *op) {
      if (failed(checkSupported(op)))
        return WalkResult::interrupt();
      if (auto task = dyn_cast<TaskOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            task, task.getCalleeAttr());
        if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock()) {
          task.emitError() << "piper-interp: node '" << task.getName()
                           << "' calls " << task.getCalleeAttr()
                           << ", which has no single-block body to run";
          return WalkResult::interrupt();
        }
        if (seen.insert(callee).second)
          worklist.push_back(callee);
      }
      // A fused backward body calls its BI and BW parts.
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock()) {
          call.emitError() << "piper-interp: call to " << call.getCalleeAttr()
                           << ", which has no single-block body to run";
          return WalkResult::interrupt();
        }
        if (seen.insert(callee).second)
          worklist.push_back(callee);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return Interpreter(fn, precision);
}

FailureOr<SmallVector<RuntimeValue>>
Interpreter::run(ArrayRef<RuntimeValue> args) const {
  func::FuncOp function = fn;
  if (args.size() != function.getNumArguments())
    return function.emitError()
           << "piper-interp: @" << function.getSymName() << " takes "
           << function.getNumArguments() << " arguments, got " << args.size();
  Executor executor(precision);
  std::string prefix = ("piper-interp: @" + function.getSymName() + ": ").str();
  for (auto [index, arg] : llvm::enumerate(function.getArguments())) {
    if (failed(checkFits(arg.getLoc(), prefix, "argument #" + Twine(index),
                         args[index], arg.getType())))
      return failure();
    RuntimeValue value = args[index];
    if (auto *t = std::get_if<ref::Tensor>(&value))
      roundToStorage(*t, arg.getType(), precision);
    executor.bind(arg, std::move(value));
  }
  SmallVector<RuntimeValue> results;
  if (failed(executor.runBlock(function.getBody().front(), results)))
    return failure();
  Operation *terminator = function.getBody().front().getTerminator();
  if (results.size() != function.getNumResults())
    return terminator->emitError()
           << prefix << "returned " << results.size() << " values for "
           << function.getNumResults() << " results";
  for (auto [index, type] : llvm::enumerate(function.getResultTypes()))
    if (failed(checkFits(terminator->getLoc(), prefix,
                         "result #" + Twine(index), results[index], type)))
      return failure();
  return results;
}
