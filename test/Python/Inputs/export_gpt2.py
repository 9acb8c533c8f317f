"""Writes the GPT-2-style module of gpt2_model.py, traced for each strategy
of test/Python/gpt2.py, with its initial weights and torch's own losses:

    export_gpt2.py OUTDIR

OUTDIR/<s>.mlir and OUTDIR/<s>.params for s in serial (batch 4), dp (2
replicas of 2), tp (batch 4 over tp = 2, biases split out), pp (2 stages,
2 microbatches of 2; the untied variant, see gpt2.py); OUTDIR/torch.txt and
OUTDIR/torch-untied.txt: 5 steps of torch.optim.AdamW on the same global
batches of 4 sequences.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_model as g  # noqa: E402
import harness  # noqa: E402
import piper  # noqa: E402

STEPS, SEED, SEQ = 5, 0, 8


def trace(model, batch, mesh, **kw):
    idx = torch.zeros(batch, SEQ, dtype=torch.long)
    y = torch.zeros(batch, SEQ, dtype=torch.long)
    return piper.trace(model, (idx,), loss=g.lm_loss, loss_inputs=(y,),
                       mesh=mesh, **kw)


def main(out):
    torch.set_default_dtype(torch.float64)
    tied = g.GPT2(stages=2)
    untied = g.GPT2(stages=2, tied=False)
    variants = {
        "serial": (tied, trace(tied, 4, {"dp": 1}), 1),
        "dp": (tied, trace(tied, 2, {"dp": 2}), 2),
        "tp": (tied, trace(tied, 4, {"dp": 1, "tp": 2}, split_bias=True), 1),
        "pp": (untied, trace(untied, 2, {"dp": 1, "pp": 2}), 2),
    }
    for name, (_, traced, _) in variants.items():
        traced.write(os.path.join(out, name + ".mlir"))
        traced.write_params(os.path.join(out, name + ".params"))
    for name, model in (("torch", tied), ("torch-untied", untied)):
        key = "serial" if model is tied else "pp"
        _, traced, factor = variants[key]
        losses = harness.torch_losses(model, traced, STEPS, SEED, factor,
                                      g.lm_loss, 1)
        harness.write_losses(os.path.join(out, name + ".txt"), losses)


if __name__ == "__main__":
    main(sys.argv[1])
