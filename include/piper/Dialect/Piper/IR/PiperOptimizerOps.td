//===- PiperOptimizerOps.td - Piper optimizer updates ------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Optimizer updates are elementwise over a parameter, its gradient and its
// state, so any slice of them can be updated on its own: that is what lets
// ZeRO shard optimizer state (and gradients, and parameters) over the
// data-parallel axes without changing the arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPEROPTIMIZEROPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPEROPTIMIZEROPS_TD

include "piper/Dialect/Piper/IR/PiperBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "piper/Dialect/Piper/IR/PiperInterfaces.td"

def Piper_OptimizerTensor : RankedTensorOf<[F32, F64, BF16]>;
def Piper_StepTensor : 0DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}

def Piper_SgdUpdateOp : Piper_Op<"sgd_update", [Pure,
    Piper_DistributionRule<["inferLocalForm", "getCost"]>,
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>]> {
  let summary = "one SGD step with momentum and weight decay";
  let description = [{
    PyTorch's `torch.optim.SGD` step, elementwise:

    ```
    g'  = grad + weight_decay * param
    buf = momentum * momentum_buffer + g'     (buf = g' when momentum = 0)
    new_param = param - lr * buf
    ```

    The momentum buffer starts at zero. Because every element is updated
    independently, the op applies unchanged to any shard of the parameter.

    Example:

    ```mlir
    %p2, %b2 = piper.sgd_update %p, %g, %b {lr = 0.1 : f64, momentum = 0.9 : f64}
        : tensor<16x32xf32>
    ```

    **Constraints:**
    - Parameter, gradient, buffer and both results have one type.
    - `lr` > 0, 0 <= `momentum` < 1, `weight_decay` >= 0.
  }];
  let arguments = (ins Piper_OptimizerTensor:$param,
                       Piper_OptimizerTensor:$grad,
                       Piper_OptimizerTensor:$momentum_buffer,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Piper_OptimizerTensor:$new_param,
                      Piper_OptimizerTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

def Piper_AdamWUpdateOp : Piper_Op<"adamw_update", [Pure,
    Piper_DistributionRule<["inferLocalForm", "getCost"]>,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "one AdamW step with bias correction and decoupled decay";
  let description = [{
    PyTorch's `torch.optim.AdamW` step, elementwise, where `step` is the
    1-based number of this step:

    ```
    p  = param * (1 - lr * weight_decay)
    m  = beta1 * exp_avg    + (1 - beta1) * grad
    v  = beta2 * exp_avg_sq + (1 - beta2) * grad^2
    new_param = p - lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps)
    ```

    Both moments start at zero. Elementwise, so it applies to any shard.

    Example:

    ```mlir
    %p2, %m2, %v2 = piper.adamw_update %p, %g, %m, %v, %step
        {lr = 1.0e-03 : f64, weight_decay = 1.0e-02 : f64} : tensor<16x32xf32>
    ```

    **Constraints:**
    - Parameter, gradient, both moments and the three results have one
      type; `step` is a rank-0 `i64` tensor.
    - `lr` > 0, 0 <= `beta1`, `beta2` < 1, `eps` > 0, `weight_decay` >= 0.
  }];
  let arguments = (ins Piper_OptimizerTensor:$param,
                       Piper_OptimizerTensor:$grad,
                       Piper_OptimizerTensor:$exp_avg,
                       Piper_OptimizerTensor:$exp_avg_sq,
                       Piper_StepTensor:$step,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1.0e-8">:$eps,
                       DefaultValuedAttr<F64Attr, "0.01">:$weight_decay);
  let results = (outs Piper_OptimizerTensor:$new_param,
                      Piper_OptimizerTensor:$new_exp_avg,
                      Piper_OptimizerTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step attr-dict `:`
    type($param)
  }];
  let hasVerifier = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPEROPTIMIZEROPS_TD
