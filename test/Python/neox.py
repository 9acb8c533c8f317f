# REQUIRES: torch, mpi
# Fused projections and partial rotary embeddings at a position offset
# (Inputs/neox_model.py, GPT-NeoX/Phi style: q, k, v from one biased Linear
# by .split and .chunk, the SwiGLU gate and up from one Linear by .chunk,
# rotary on 4 and 6 of each head's 8 channels at positions 3..10).
# piper.trace makes each piece of a fused weight (and bias) its own
# parameter '<name>.<i>' and the rotary pattern one piper.rope {offset,
# rotary_dim}. Trained 5 AdamW steps in f64 from the module's weights by
# piper-interp (the reference kernels), by piper-run serially (the native
# lowering) and by piper-run under TP over 2 ranks (the q, k, v and gate/up
# pieces by column with their biases, so each rank holds one head and half
# of the gate and up features; dense and down by row): every loss equals
# torch.optim.AdamW's to 1e-10, and the parameters the TP run writes, read
# back into the module's layout (fused weights reassembled from their
# pieces), equal torch's after 5 steps to 1e-9.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %s export %t
# RUN: FileCheck %s --input-file=%t/serial.mlir
# RUN: piper-interp %t/serial.mlir --steps=5 --params-in=%t/serial.params --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none > %t/interp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/interp.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/serial.mlir --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/serial.plan
# RUN: piper-run %t/serial.plan --steps=5 --params-in=%t/serial.params > %t/run.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/run.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/tp.mlir --directives=%S/Inputs/neox-tp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/tp.plan
# RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=5 --params-in=%t/tp.params --params-out=%t/tp.out > %t/tp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/tp.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: %python_torch %s params %t | FileCheck %s --check-prefix=PARAMS

# CHECK-LABEL: func.func @step(
# CHECK-SAME:    %layers.0.attn.qkv.weight.0: tensor<16x16xf64>
# CHECK-SAME:    %layers.0.attn.qkv.weight.2: tensor<16x16xf64>
# CHECK-SAME:    %layers.0.attn.qkv.bias.0: tensor<16xf64>
# CHECK-SAME:    %layers.0.mlp.gate_up.weight.1: tensor<16x24xf64>
# CHECK:         %[[Q:.*]] = piper.linear %{{.*}}, %layers.0.attn.qkv.weight.0, %layers.0.attn.qkv.bias.0
# CHECK:         %[[K:.*]] = piper.linear %{{.*}}, %layers.0.attn.qkv.weight.1, %layers.0.attn.qkv.bias.1
# CHECK:         piper.rope %[[Q]] {head_dim = 8 : i64, theta = 1.00000000000000000e+04 : f64, offset = 3 : i64, rotary_dim = 4 : i64} : tensor<4x8x16xf64>
# CHECK:         piper.rope %[[K]] {head_dim = 8 : i64, theta = 1.00000000000000000e+04 : f64, offset = 3 : i64, rotary_dim = 4 : i64} : tensor<4x8x16xf64>
# CHECK:         piper.attention
# CHECK:         %[[G:.*]] = piper.linear %{{.*}}, %layers.0.mlp.gate_up.weight.0 :
# CHECK:         %[[U:.*]] = piper.linear %{{.*}}, %layers.0.mlp.gate_up.weight.1 :
# CHECK:         piper.swiglu %[[G]], %[[U]]
# CHECK:         piper.rope {{.*}}offset = 3 : i64, rotary_dim = 6 : i64}

# SAME-COUNT-5: step {{[1-5]}} torch
# SAME-NOT:     MISMATCH
# SAME:         OK: 5 steps

# PARAMS: compared 34 tensors of 24 parameters: max abs difference {{.*}}
# PARAMS-NOT: MISMATCH
# PARAMS: OK

import copy
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402
import neox_model  # noqa: E402
import piper  # noqa: E402

STEPS, SEED = 5, 0


def trace(model, mesh, **kw):
    idx = torch.zeros(4, 8, dtype=torch.long)
    return piper.trace(model, (idx,), loss=neox_model.lm_loss,
                       loss_inputs=(idx,), mesh=mesh, **kw)


def export(out):
    model = neox_model.NeoX()
    serial = trace(model, {"dp": 1})
    serial.write(os.path.join(out, "serial.mlir"))
    serial.write_params(os.path.join(out, "serial.params"))
    tp = trace(model, {"dp": 1, "tp": 2}, split_bias=True)
    tp.write(os.path.join(out, "tp.mlir"))
    tp.write_params(os.path.join(out, "tp.params"))
    harness.write_losses(os.path.join(out, "torch.txt"), harness.torch_losses(
        model, serial, STEPS, SEED, 1, neox_model.lm_loss, 1))


def params(out):
    """The TP run's final parameters against torch's after the same steps."""
    model = neox_model.NeoX()
    tp = trace(model, {"dp": 1, "tp": 2}, split_bias=True)
    trained = copy.deepcopy(model)
    opt = torch.optim.AdamW(trained.parameters(), lr=0.01, betas=(0.9, 0.95),
                            eps=1e-8, weight_decay=0.1)
    for step in range(1, STEPS + 1):
        tokens, targets = tp.synthetic_inputs(SEED, step)
        loss = neox_model.lm_loss(trained(tokens), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    got = tp.read_params(os.path.join(out, "tp.out"))
    want = dict(trained.named_parameters())
    worst, ok = 0.0, set(got) == set(want)
    for name, t in got.items():
        d = float((t - want[name].detach()).abs().max())
        worst = max(worst, d)
        if d > 1e-9:
            ok = False
            print("MISMATCH %s %.3e" % (name, d))
    print("compared %d tensors of %d parameters: max abs difference %.3e"
          % (len(tp.params), len(got), worst))
    print("OK" if ok else "MISMATCH")


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    {"export": export, "params": params}[sys.argv[1]](sys.argv[2])
