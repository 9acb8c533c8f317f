#!/usr/bin/env python3
"""PyTorch DDP (gloo) baseline for bench/throughput.sh.

Re-implements `piper-gen --model=mlp` (lib/ModelGen/ModelBuilder.cpp): for
each of --layers layers a linear layer (in-features, then hidden, to hidden)
followed by relu, a linear head (hidden -> vocab classes) and the mean
cross-entropy loss; weights ~ N(0, 0.02), biases zero; AdamW with piper's
defaults (lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.01). Synthetic
random data: only the throughput is measured.

--batch is the GLOBAL batch: each of --world ranks (processes started with
torch.multiprocessing, gloo over loopback, DistributedDataParallel) takes
batch/world rows. --threads is the per-rank thread count (torch intra-op,
OpenMP and OpenBLAS). Prints one line:

  ddp world=2 threads=1 dtype=f32 batch=64 steps=10 samples/s=... step_ms=...

samples/s is the global batch over the median step time of the timed steps
(after --warmup untimed steps), measured on rank 0; every step ends with a
barrier-free optimizer step, but DDP's gradient all-reduce makes the ranks
move in lockstep.
"""

import argparse
import os
import socket
import statistics
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--in-features", type=int, default=512)
    p.add_argument("--vocab", type=int, default=512,
                   help="number of classes (piper-gen --vocab)")
    p.add_argument("--batch", type=int, default=64, help="global batch")
    p.add_argument("--steps", type=int, default=10, help="timed steps")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps")
    p.add_argument("--world", type=int, default=2, help="ranks (processes)")
    p.add_argument("--threads", type=int, default=1, help="threads per rank")
    p.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.batch % args.world != 0:
        p.error(f"--batch={args.batch} is not divisible by --world={args.world}")
    if min(args.layers, args.hidden, args.in_features, args.vocab, args.batch,
           args.steps, args.world, args.threads) < 1 or args.warmup < 0:
        p.error("sizes, --steps, --world and --threads must be >= 1")
    return args


def pin_threads(threads):
    # Before torch (and its OpenMP and OpenBLAS) is loaded, so every pool
    # starts at this size; the spawned ranks inherit the environment.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_model(args, torch):
    nn = torch.nn
    layers = []
    width = args.in_features
    for _ in range(args.layers):
        layers += [nn.Linear(width, args.hidden), nn.ReLU()]
        width = args.hidden
    layers.append(nn.Linear(width, args.vocab))  # the head
    model = nn.Sequential(*layers)
    with torch.no_grad():
        for m in model:
            if isinstance(m, nn.Linear):
                m.weight.normal_(0.0, 0.02)  # piper's kInitStd
                m.bias.zero_()
    return model


def worker(rank, args, port, results):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=args.world)

    dtype = torch.float32 if args.dtype == "f32" else torch.float64
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = build_model(args, torch).to(dtype)
    ddp = DDP(model)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()  # mean over the rows

    rows = args.batch // args.world
    gen = torch.Generator().manual_seed(args.seed + 1 + rank)
    # A few batches made up front, so data generation is not timed (as in
    # piper-run, whose step time covers only the compiled step).
    pool = [(torch.randn(rows, args.in_features, generator=gen, dtype=dtype),
             torch.randint(0, args.vocab, (rows,), generator=gen))
            for _ in range(4)]

    times = []
    loss = None
    for step in range(args.warmup + args.steps):
        x, y = pool[step % len(pool)]
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()  # gradients all-reduced (averaged) by DDP over gloo
        opt.step()
        elapsed = time.perf_counter() - start
        if step >= args.warmup:
            times.append(elapsed)
    dist.barrier()
    if rank == 0:
        results.put((times, float(loss)))
    dist.destroy_process_group()


def main(argv=None):
    args = parse_args(argv)
    pin_threads(args.threads)
    import torch
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    mp.spawn(worker, args=(args, free_port(), results), nprocs=args.world,
             join=True)
    times, loss = results.get()
    step = statistics.median(times)
    print(f"ddp world={args.world} threads={args.threads} dtype={args.dtype} "
          f"batch={args.batch} steps={args.steps} "
          f"samples/s={args.batch / step:.1f} step_ms={step * 1e3:.3f} "
          f"loss={loss:.6f} torch={torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
