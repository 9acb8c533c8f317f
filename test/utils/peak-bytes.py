#!/usr/bin/env python3
"""Compares each rank's measured peak bytes with the memory plan's.

Reads `piper-opt --piper-memory-plan` output (one "GROUP: peak N at ..." line
per device group, in rank order for a pipeline mesh; "all" for every rank)
and `piper-run --peak-bytes` output ("rank R: peak N bytes (...)"). For each
rank prints measured / predicted and exits 1 when a ratio lies outside
[--min, --max]. The memory plan counts tensors between tasks; the runtime's
figure also holds the driver's result buffers and the kernels' temporaries
(docs/Memory.md, "Measured peak bytes"), so the ratio is >= 1.
"""

import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("plan")
    parser.add_argument("run")
    parser.add_argument("--min", type=float, default=1.0)
    parser.add_argument("--max", type=float, required=True)
    args = parser.parse_args()
    with open(args.plan) as f:
        predicted = [
            (m.group(1), int(m.group(2)))
            for m in re.finditer(r"^(\S+): peak (\d+) at", f.read(), re.M)
        ]
    with open(args.run) as f:
        measured = [
            (int(m.group(1)), int(m.group(2)))
            for m in re.finditer(r"^rank (\d+): peak (\d+) bytes", f.read(), re.M)
        ]
    if not predicted or not measured:
        print("peak-bytes: no figures found", file=sys.stderr)
        return 1
    ok = True
    for rank, bytes_ in measured:
        group, plan = predicted[0] if len(predicted) == 1 else predicted[rank]
        ratio = bytes_ / plan
        inside = args.min <= ratio <= args.max
        ok = ok and inside
        print(f"rank {rank} ({group}): measured {bytes_} predicted {plan} "
              f"ratio {ratio:.2f} {'ok' if inside else 'OUTSIDE'} "
              f"[{args.min}, {args.max}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
