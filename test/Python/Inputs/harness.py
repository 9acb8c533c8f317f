"""Shared by the test/Python lit tests: torch's own training, and comparing
its losses with a Piper run's.

    torch_losses(model, traced, steps, seed, batch_factor, loss_fn, opt)
trains a copy of `model` with torch.optim.AdamW on exactly the batches
piper-run feeds (traced.synthetic_inputs) and returns the loss per step.
"""

import copy
import re
import sys

import torch

# The optimizer of every test: passed to piper-compile/piper-interp as flags
# and to torch.optim.AdamW, so that neither side's defaults matter. torch's
# one parameter group decays every tensor: --no-decay=none says the same
# (Piper's default exempts biases and norm gains).
ADAMW = {"lr": 0.01, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8,
         "weight_decay": 0.1}


def compile_flags():
    return ("--optimizer=adamw --lr=%r --beta1=%r --beta2=%r --eps=%r "
            "--weight-decay=%r --no-decay=none" % (ADAMW["lr"], ADAMW["beta1"], ADAMW["beta2"],
                                   ADAMW["eps"], ADAMW["weight_decay"]))


def torch_losses(model, traced, steps, seed, batch_factor, loss_fn, n_inputs):
    model = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=ADAMW["lr"],
                            betas=(ADAMW["beta1"], ADAMW["beta2"]),
                            eps=ADAMW["eps"],
                            weight_decay=ADAMW["weight_decay"])
    losses = []
    for step in range(1, steps + 1):
        data = traced.synthetic_inputs(seed, step, batch_factor)
        out = model(*data[:n_inputs])
        loss = loss_fn(out, *data[n_inputs:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def write_losses(path, losses):
    with open(path, "w") as f:
        for i, l in enumerate(losses):
            f.write("step %d loss %.17g\n" % (i + 1, l))


def read_losses(path):
    out = []
    with open(path) as f:
        for line in f:
            m = re.match(r"step (\d+) loss (\S+)", line)
            if m:
                out.append(float(m.group(2)))
    return out


def compare_main(argv):
    """compare TORCH.txt PIPER.txt [rtol]: every loss within rtol (relative)."""
    want, got = read_losses(argv[0]), read_losses(argv[1])
    rtol = float(argv[2]) if len(argv) > 2 else 1e-10
    ok = len(want) == len(got) and len(want) > 0
    worst = 0.0
    for i, (a, b) in enumerate(zip(want, got)):
        rel = abs(a - b) / max(abs(a), 1e-300)
        worst = max(worst, rel)
        print("step %d torch %.17g piper %.17g rel %.2e%s" % (
            i + 1, a, b, rel, "" if rel <= rtol else "  MISMATCH"))
        ok = ok and rel <= rtol
    if len(want) != len(got):
        print("MISMATCH: %d torch losses, %d piper losses" % (len(want), len(got)))
    print("%s: %d steps, max relative difference %.2e (limit %.0e)" % (
        "OK" if ok else "MISMATCH", len(got), worst, rtol))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(compare_main(sys.argv[1:]))
