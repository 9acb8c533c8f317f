#!/usr/bin/python3
"""The same training step as a compiled dense-GPT plan, in PyTorch.

Reads PLAN/plan.json (what piper-run feeds the plan: every parameter's name
and shape, the token data's shape and bound), builds the model piper-gen
generates in torch (test/Torch/compare_with_torch.py's decoder_loss, the
model the Torch tests check Piper's gradients against) at the plan's dtype,
and times forward, backward and a torch.optim.AdamW step per iteration.
Prints the median seconds of the timed steps (after one warm-up):

    /usr/bin/python3 bench/gpt_baseline.py PLAN --steps=N --heads=H
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "Torch"))
from compare_with_torch import Notes, decoder_loss  # noqa: E402

DTYPES = {"f32": torch.float32, "f64": torch.float64}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--heads", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    # scripts/gpu-check's row 5: the same step on the GPU (PyTorch 2.x).
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.device != "cpu":
        torch.set_default_device(args.device)
    torch.manual_seed(0)

    with open(os.path.join(args.plan, "plan.json")) as f:
        plan = json.load(f)
    params, data = {}, []
    for arg in plan["arguments"]:
        if arg["kind"] == "param":
            dtype = DTYPES[arg["dtype"]]
            t = torch.randn(arg["shape"], dtype=dtype) * 0.02
            if arg.get("init") == "ones":
                t = torch.ones(arg["shape"], dtype=dtype)
            params[arg["name"]] = t.requires_grad_(True)
        elif arg["kind"] == "data":
            data.append(torch.randint(0, arg["bound"], arg["shape"]))
    if len(data) != 2:
        sys.exit("gpt_baseline.py: expected token ids and labels, got %d data "
                 "arguments (is %s a GPT plan?)" % (len(data), args.plan))
    optimizer = torch.optim.AdamW(params.values(), lr=1e-3)
    notes = Notes()
    times = []
    for step in range(args.steps + 1):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = decoder_loss(params, data, "gpt", args.heads, 1, notes)
        loss.backward()
        optimizer.step()
        if args.device != "cpu":
            torch.cuda.synchronize()
        if step > 0:
            times.append(time.perf_counter() - start)
    print(f"{statistics.median(times):.9f}")


if __name__ == "__main__":
    main()
