# REQUIRES: torch, mpi
# The other spellings of the LLM features (Inputs/features_model.py): exact
# GELU by nn.GELU() and F.gelu (piper.gelu_erf), multi-query attention by
# repeat_interleave (num_kv_heads = 1), rotary embeddings on [B, S, H, D]
# heads with theta = 1e6, q/k norms after the transpose to [B, H, S, D].
# Trained 3 AdamW steps in f64 by piper-interp (the reference kernels) and
# by piper-run (the native lowering) from the module's weights: every loss
# equals torch.optim.AdamW's to 1e-10. Tensor parallelism over 2 ranks
# cannot split the one key/value head: piper-compile says so.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %s %t
# RUN: FileCheck %s --input-file=%t/features.mlir
# RUN: piper-interp %t/features.mlir --steps=3 --params-in=%t/features.params --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none > %t/interp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/interp.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/features.mlir --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/features.plan
# RUN: piper-run %t/features.plan --steps=3 --params-in=%t/features.params > %t/run.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/run.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: not piper-compile %t/tp.mlir --directives=%S/Inputs/features-tp.json -o %t/tp.plan 2>&1 | FileCheck %s --check-prefix=TP

# CHECK-LABEL: func.func @step(
# CHECK:         %[[Q:.*]] = piper.rope %{{.*}} {head_dim = 4 : i64, theta = 1.00000000000000000e+06 : f64} : tensor<2x8x16xf64>
# CHECK:         %[[K:.*]] = piper.rope %{{.*}} {head_dim = 4 : i64, theta = 1.00000000000000000e+06 : f64} : tensor<2x8x4xf64>
# CHECK:         %[[QN:.*]] = piper.rmsnorm %[[Q]], %q_norm.weight {{.*}} : tensor<2x8x16xf64>, tensor<4xf64> -> tensor<2x8x16xf64>
# CHECK:         %[[KN:.*]] = piper.rmsnorm %[[K]], %k_norm.weight {{.*}} : tensor<2x8x4xf64>, tensor<4xf64> -> tensor<2x8x4xf64>
# CHECK:         piper.attention %[[QN]], %[[KN]], %{{.*}} {num_heads = 4 : i64, num_kv_heads = 1 : i64}
# CHECK-COUNT-2: piper.gelu_erf
# CHECK-NOT:     piper.gelu {{.*}}

# SAME-COUNT-3: step {{[1-3]}} torch
# SAME-NOT:     MISMATCH
# SAME:         OK: 3 steps

# TP: error: attention in the body of node '{{.*}}' has 1 heads; axis 'tp' of @mesh has size 2 and does not divide them

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import features_model  # noqa: E402
import harness  # noqa: E402
import piper  # noqa: E402

if __name__ == "__main__":
    out = sys.argv[1]
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(3)
    model = features_model.Features()
    idx = torch.zeros(2, 8, dtype=torch.long)
    traced = piper.trace(model, (idx,), loss=features_model.loss,
                         loss_inputs=(idx,), mesh={"dp": 1})
    piper.trace(model, (idx,), loss=features_model.loss, loss_inputs=(idx,),
                mesh={"dp": 1, "tp": 2}).write(os.path.join(out, "tp.mlir"))
    traced.write(os.path.join(out, "features.mlir"))
    traced.write_params(os.path.join(out, "features.params"))
    harness.write_losses(os.path.join(out, "torch.txt"), harness.torch_losses(
        model, traced, 3, 0, 1, features_model.loss, 1))
