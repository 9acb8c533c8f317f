# REQUIRES: torch
# The importer's other mappings (Inputs/misc_model.py: ReLU, sigmoid, tanh,
# sub, scaling, negation, a weight read through `.T` and through F.linear,
# F.layer_norm, a plain softmax, unsqueeze/permute/flatten, labels reshaped
# on input) trained 3 AdamW steps by piper-interp from the module's weights:
# every loss equals torch.optim.AdamW's to 1e-10.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %s %t
# RUN: piper-interp %t/misc.mlir --steps=3 --params-in=%t/misc.params --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none > %t/piper.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/piper.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: FileCheck %s --input-file=%t/misc.mlir
# SAME: OK: 3 steps

# `shared` is read both as stored and transposed, so it keeps its shape and
# the matmul reads a transpose; numbers become splat constants.
# CHECK-LABEL: func.func @step(
# CHECK-SAME:    %[[SH:[^:]*]]: tensor<8x8xf64> {piper.param = #piper.param<"shared",
# CHECK-SAME:    %[[X:[^:]*]]: tensor<2x4x8xf64>, %[[Y:[^:]*]]: tensor<8xi64>)
# CHECK:         piper.relu
# CHECK:         %[[ST:.*]] = piper.transpose %[[SH]] permutation = [1, 0]
# CHECK:         piper.matmul %{{.*}}, %[[ST]]
# CHECK:         piper.linear %{{.*}}, %[[ST]]
# CHECK:         arith.constant dense<5.0{{0*}}e-01> : tensor<2x4x8xf64>
# CHECK:         piper.sub
# CHECK:         arith.constant dense<-1.0{{0*}}e+00>
# CHECK:         piper.layernorm
# CHECK:         piper.softmax
# CHECK:         piper.cross_entropy {{.*}}, %[[Y]]

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402
import misc_model  # noqa: E402
import piper  # noqa: E402

if __name__ == "__main__":
    out = sys.argv[1]
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(7)
    model = misc_model.Misc()
    x = torch.zeros(2, 4, 8)
    y = torch.zeros(2, 4, dtype=torch.long)
    traced = piper.trace(model, (x,), loss=misc_model.loss, loss_inputs=(y,))
    traced.write(os.path.join(out, "misc.mlir"))
    traced.write_params(os.path.join(out, "misc.params"))
    harness.write_losses(os.path.join(out, "torch.txt"), harness.torch_losses(
        model, traced, 3, 0, 1, misc_model.loss, 1))
