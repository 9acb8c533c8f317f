"""Writes a test model traced for each strategy of its lit test, with its
initial weights and torch's own losses:

    export.py gpt2|llama OUTDIR

gpt2 (gpt2_model.py, test/Python/gpt2.py): OUTDIR/<s>.mlir and
OUTDIR/<s>.params for s in serial (batch 4), dp (2 replicas of 2), tp
(batch 4 over tp = 2, biases split out), pp (2 stages, 2 microbatches of 2;
the untied variant, see gpt2.py), pp-tied (the same with the tied head,
gpt2-pp-tied.py); OUTDIR/torch.txt and
OUTDIR/torch-untied.txt: 5 steps of torch.optim.AdamW on the same global
batches of 4 sequences.

llama (llama_model.py, test/Python/llama.py): serial, tp and pp as above
(no biases to split), and OUTDIR/torch.txt.

moe (moe_model.py, test/Python/moe.py): serial (batch 4), ep (2 sequences
per ep rank, ep = 2), ppep (pp = 2 x ep = 2, 2 microbatches of 1 sequence
per ep rank), and OUTDIR/torch.txt.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_model  # noqa: E402
import harness  # noqa: E402
import llama_model  # noqa: E402
import moe_model  # noqa: E402
import piper  # noqa: E402

STEPS, SEED, SEQ = 5, 0, 8


def trace(model, batch, mesh, **kw):
    idx = torch.zeros(batch, SEQ, dtype=torch.long)
    y = torch.zeros(batch, SEQ, dtype=torch.long)
    return piper.trace(model, (idx,), loss=model.lm_loss, loss_inputs=(y,),
                       mesh=mesh, **kw)


def write(out, variants, references):
    for name, (_, traced, _) in variants.items():
        traced.write(os.path.join(out, name + ".mlir"))
        traced.write_params(os.path.join(out, name + ".params"))
    for name, (model, key) in references.items():
        _, traced, factor = variants[key]
        losses = harness.torch_losses(model, traced, STEPS, SEED, factor,
                                      model.lm_loss, 1)
        harness.write_losses(os.path.join(out, name + ".txt"), losses)


def llama(out):
    model = llama_model.Llama(stages=2)
    model.lm_loss = llama_model.lm_loss
    write(out, {
        "serial": (model, trace(model, 4, {"dp": 1}), 1),
        "tp": (model, trace(model, 4, {"dp": 1, "tp": 2}), 1),
        "pp": (model, trace(model, 2, {"dp": 1, "pp": 2}), 2),
    }, {"torch": (model, "serial")})


def gpt2(out):
    g = gpt2_model
    tied = g.GPT2(stages=2)
    untied = g.GPT2(stages=2, tied=False)
    tied.lm_loss = untied.lm_loss = g.lm_loss
    variants = {
        "serial": (tied, trace(tied, 4, {"dp": 1}), 1),
        "dp": (tied, trace(tied, 2, {"dp": 2}), 2),
        "tp": (tied, trace(tied, 4, {"dp": 1, "tp": 2}, split_bias=True), 1),
        "pp": (untied, trace(untied, 2, {"dp": 1, "pp": 2}), 2),
        "pp-tied": (tied, trace(tied, 2, {"dp": 1, "pp": 2}), 2),
    }
    write(out, variants, {"torch": (tied, "serial"),
                          "torch-untied": (untied, "pp")})


def moe(out):
    model = moe_model.MoEModel(stages=2)
    model.lm_loss = moe_model.lm_loss
    # EP ranks are batch replicas (each with its own tokens) that exchange
    # them with the experts: global batch 4 = 2 ep ranks x 2 sequences, or
    # 2 ep ranks x 2 microbatches of 1 under PP2 x EP2.
    write(out, {
        "serial": (model, trace(model, 4, {"dp": 1}), 1),
        "ep": (model, trace(model, 2, {"dp": 1, "ep": 2}), 2),
        "ppep": (model, trace(model, 1, {"dp": 1, "pp": 2, "ep": 2}), 4),
    }, {"torch": (model, "serial")})


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    {"gpt2": gpt2, "llama": llama, "moe": moe}[sys.argv[1]](sys.argv[2])
