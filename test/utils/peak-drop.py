#!/usr/bin/env python3
"""Compares how much a strategy change lowers the predicted and measured peaks.

Takes the `piper-opt --piper-memory-plan` outputs and the `piper-run
--peak-bytes` outputs of a baseline and of a variant (say, the same strategy
with activation recomputation) and, for one device group and its rank,
prints both drops and their ratio; exits 1 unless the measured drop is
within --tolerance (relative) of the predicted one and the predicted drop is
at least --min-drop bytes.
"""

import argparse
import re
import sys


def plan_peak(path, group):
    with open(path) as f:
        for m in re.finditer(r"^(\S+): peak (\d+) at", f.read(), re.M):
            if m.group(1) == group:
                return int(m.group(2))
    sys.exit(f"{path}: no peak for group {group}")


def run_peak(path, rank):
    with open(path) as f:
        for m in re.finditer(r"^rank (\d+): peak (\d+) bytes", f.read(), re.M):
            if int(m.group(1)) == rank:
                return int(m.group(2))
    sys.exit(f"{path}: no peak for rank {rank}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("base_plan")
    parser.add_argument("base_run")
    parser.add_argument("plan")
    parser.add_argument("run")
    parser.add_argument("--group", required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--tolerance", type=float, default=0.1)
    parser.add_argument("--min-drop", type=int, default=1)
    args = parser.parse_args()
    predicted = plan_peak(args.base_plan, args.group) - plan_peak(
        args.plan, args.group)
    measured = run_peak(args.base_run, args.rank) - run_peak(
        args.run, args.rank)
    ok = (predicted >= args.min_drop and
          abs(measured - predicted) <= args.tolerance * predicted)
    print(f"{args.group} (rank {args.rank}): predicted drop {predicted} "
          f"measured drop {measured} ratio {measured / max(predicted, 1):.3f} "
          f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
