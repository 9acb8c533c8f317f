//===- PiperDistribution.cpp - Default distribution rules, asking ops -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The default rules of `DistributionOpInterface` (elementwise ops, VJPs
// whose gradients follow their primals), `DistributionRule` (what the
// consumers call), and piper.vjp's side of the interface: it names the op
// it differentiates, whose registered model holds the rule.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperDistributionRule.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// Shape arithmetic and default rules
//===----------------------------------------------------------------------===//

DistributionQuery DistributionQuery::getForward() const {
  DistributionQuery forward;
  forward.operands = primals();
  forward.localOperands = localPrimals();
  forward.results = cotangents();
  forward.localResults = localCotangents();
  forward.attrs = attrs;
  forward.numPrimals = numPrimals;
  return forward;
}

SmallVector<double> mlir::piper::detail::getDims(Type type) {
  SmallVector<double> out;
  if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasRank())
    for (int64_t d : shaped.getShape())
      out.push_back(ShapedType::isDynamic(d) ? 1.0 : double(d));
  return out;
}

double mlir::piper::detail::getNumElements(Type type) {
  double n = 1;
  for (double d : getDims(type))
    n *= d;
  return isa<ShapedType>(type) ? n : 0;
}

double mlir::piper::detail::getBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  unsigned bits = shaped.getElementType().getIntOrFloatBitWidth();
  return getNumElements(type) * double(std::max(8u, bits) / 8);
}

double mlir::piper::detail::getLastDim(Type type, unsigned fromEnd) {
  SmallVector<double> d = getDims(type);
  return d.size() > fromEnd ? d[d.size() - 1 - fromEnd] : 1;
}

double mlir::piper::detail::getDim(Type type, unsigned i) {
  SmallVector<double> d = getDims(type);
  return i < d.size() ? d[i] : 1;
}

int64_t mlir::piper::detail::getChannelSplit(Type global, Type local) {
  auto g = dyn_cast<RankedTensorType>(global);
  auto l = dyn_cast<RankedTensorType>(local);
  if (!g || !l || g.getRank() != l.getRank() || g.getRank() == 0)
    return 0;
  for (int64_t d = 0; d + 1 < g.getRank(); ++d)
    if (g.getDimSize(d) != l.getDimSize(d))
      return 0;
  int64_t gl = g.getShape().back(), ll = l.getShape().back();
  if (ll <= 0 || gl % ll != 0)
    return 0;
  return gl / ll;
}

LogicalResult
mlir::piper::detail::inferCommonLocalForm(const DistributionQuery &query,
                                          unsigned count, LocalForm &form,
                                          DistributionErrorFn error) {
  TypeRange locals = query.localOperands.take_front(count);
  Type type = locals.front();
  for (Type other : locals)
    if (other != type) {
      if (error)
        error() << "would mix " << type << " and " << other;
      return failure();
    }
  for (Type result : query.results)
    form.resultTypes.push_back(isa<RankedTensorType>(result) ? type : result);
  return success();
}

LogicalResult
mlir::piper::detail::inferElementwiseLocalForm(const DistributionQuery &query,
                                               LocalForm &form,
                                               DistributionErrorFn error) {
  return inferCommonLocalForm(query, query.localOperands.size(), form, error);
}

LogicalResult
mlir::piper::detail::inferFollowPrimalsLocalForm(const DistributionQuery &query,
                                                 LocalForm &form) {
  for (int64_t wrt : query.wrt)
    form.resultTypes.push_back(query.localOperands[wrt]);
  return success();
}

LogicalResult
mlir::piper::detail::inferWholeOnlyLocalForm(const DistributionQuery &query,
                                             LocalForm &form) {
  if (query.isVJP())
    return inferFollowPrimalsLocalForm(query, form);
  return failure();
}

OpCount mlir::piper::detail::getKernelBytes(const DistributionQuery &query) {
  OpCount c;
  for (Type t : query.localOperands)
    c.bytes += getBytes(t);
  for (unsigned i = 0, e = query.results.size(); i < e; ++i)
    c.bytes += getBytes(query.localResult(i));
  c.kernels = 1;
  return c;
}

OpCount mlir::piper::detail::getElementwiseCost(const DistributionQuery &query,
                                                double perElement) {
  OpCount c = getKernelBytes(query);
  if (!query.results.empty())
    c.vectorFlops = perElement * getNumElements(query.localResult(0));
  return c;
}

OpCount mlir::piper::detail::getDefaultVJPCost(const DistributionQuery &query,
                                               OpCount forward) {
  OpCount c = getKernelBytes(query);
  c.vectorFlops = 2 * forward.vectorFlops;
  return c;
}

//===----------------------------------------------------------------------===//
// piper.vjp: the rule of the op it differentiates
//===----------------------------------------------------------------------===//

std::optional<RegisteredOperationName> VJPOp::getDistributionRuleOp() {
  return RegisteredOperationName::lookup(getOp(), getContext());
}

DistributionQuery VJPOp::getDistributionQuery(TypeRange localOperands,
                                              TypeRange localResults) {
  DistributionQuery query;
  // The primals, then the cotangents: one run of operands.
  query.operands = getOperation()->getOperandTypes();
  query.localOperands = localOperands;
  query.results = getOperation()->getResultTypes();
  query.localResults = localResults;
  query.attrs = getForwardAttrs();
  query.wrt = getWrt();
  query.numPrimals = getPrimals().size();
  return query;
}

void VJPOp::applyLocalForm(const LocalForm &form) {
  for (auto [result, type] : llvm::zip(getResults(), form.resultTypes))
    result.setType(type);
  if (form.attrs.empty())
    return;
  NamedAttrList attrs(getForwardAttrs());
  for (NamedAttribute attr : form.attrs)
    attrs.set(attr.getName(), attr.getValue());
  setForwardAttrsAttr(attrs.getDictionary(getContext()));
}

//===----------------------------------------------------------------------===//
// DistributionRule
//===----------------------------------------------------------------------===//

std::optional<DistributionRule> DistributionRule::get(Operation *op) {
  auto iface = dyn_cast<DistributionOpInterface>(op);
  if (!iface)
    return std::nullopt;
  std::optional<RegisteredOperationName> ruleOp = iface.getDistributionRuleOp();
  if (!ruleOp)
    return std::nullopt;
  const auto *rule = ruleOp->getInterface<DistributionOpInterface>();
  // A VJP of itself would have no rule of its own to follow.
  if (!rule ||
      (isa<VJPOp>(op) && ruleOp->getStringRef() == VJPOp::getOperationName()))
    return std::nullopt;
  return DistributionRule(iface, rule, ruleOp->getStringRef());
}

LogicalResult DistributionRule::inferLocalForm(TypeRange localOperands,
                                               LocalForm &form,
                                               DistributionErrorFn error,
                                               TypeRange globalOperands) const {
  DistributionQuery q = query(localOperands, {});
  if (!globalOperands.empty())
    q.operands = globalOperands;
  form = LocalForm();
  if (failed(rule->inferLocalForm(q, form, error)))
    return failure();
  form.partialSums = rule->getPartialSums(q);
  form.partialSums.resize(form.resultTypes.size(), false);
  return success();
}

OpCount DistributionRule::getCost(TypeRange operandTypes,
                                  TypeRange resultTypes) const {
  DistributionQuery q = query(operandTypes, resultTypes);
  if (!q.isVJP())
    return rule->getCost(q);
  // One kernel per gradient, each reading the primals and cotangents.
  OpCount total;
  ArrayRef<int64_t> wrt = q.wrt;
  for (auto [index, primal] : llvm::enumerate(wrt)) {
    DistributionQuery one = q;
    one.wrt = wrt.slice(index, 1);
    one.results = q.results.slice(index, 1);
    one.localResults = q.localResults.slice(index, 1);
    total += rule->getCost(one);
  }
  return total;
}

OpCount DistributionRule::getGlobalCost() const {
  Operation *o = op.getOperation();
  return getCost(o->getOperandTypes(), o->getResultTypes());
}

std::optional<unsigned> DistributionRule::getWeightOperand() const {
  std::optional<unsigned> weight = rule->getWeightOperand();
  // A VJP may leave the weight out of its primals.
  if (!weight || *weight >= query(op->getOperandTypes(), {}).numPrimals)
    return std::nullopt;
  return weight;
}

SmallVector<unsigned>
DistributionRule::getTokenGatheredOperands(TypeRange localOperands) const {
  return rule->getTokenGatheredOperands(query(localOperands, {}));
}

SmallVector<unsigned> DistributionRule::getExpertWeightOperands() const {
  return rule->getExpertWeightOperands(query(op->getOperandTypes(), {}));
}

SmallVector<ExpertExchange> DistributionRule::getExpertExchanges() const {
  SmallVector<ExpertExchange> exchanges =
      rule->getExpertExchanges(query(op->getOperandTypes(), {}));
  exchanges.resize(op->getNumResults(), ExpertExchange::None);
  return exchanges;
}

LogicalResult
DistributionRule::verifyWeightSplit(DistributionErrorFn error) const {
  Operation *o = op.getOperation();
  return rule->verifyWeightSplit(query(o->getOperandTypes(), {}), error);
}

SmallVector<bool>
DistributionRule::getPartialSums(TypeRange localOperands) const {
  SmallVector<bool> partial = rule->getPartialSums(query(localOperands, {}));
  partial.resize(op->getNumResults(), false);
  return partial;
}

bool DistributionRule::propagatesPartialSums() const {
  return rule->propagatesPartialSums();
}

int64_t DistributionRule::getChannelGroups() const {
  return rule->getChannelGroups(query(op->getOperandTypes(), {}).attrs);
}
