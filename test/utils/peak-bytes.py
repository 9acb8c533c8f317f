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
    # Consecutive ranks sharing a group (data-parallel replicas of a stage
    # when dp is the mesh's last axis).
    parser.add_argument("--ranks-per-group", type=int, default=1)
    args = parser.parse_args()
    with open(args.plan) as f:
        text = f.read()
        predicted = [
            (m.group(1), int(m.group(2)))
            for m in re.finditer(r"^(\S+): peak (\d+) at", text, re.M)
        ]
        # With --piper-memory-plan=driver-results, compare with the peak
        # that counts the driver's result buffers too.
        with_results = [int(m.group(1)) for m in re.finditer(
            r"^  driver results \d+, peak with them (\d+)$", text, re.M)]
        if len(with_results) == len(predicted):
            predicted = [(group, bytes_) for (group, _), bytes_ in
                         zip(predicted, with_results)]
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
        group, plan = (predicted[0] if len(predicted) == 1 else
                       predicted[rank // args.ranks_per_group])
        ratio = bytes_ / plan
        inside = args.min <= ratio <= args.max
        ok = ok and inside
        print(f"rank {rank} ({group}): measured {bytes_} predicted {plan} "
              f"ratio {ratio:.2f} {'ok' if inside else 'OUTSIDE'} "
              f"[{args.min}, {args.max}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
