#!/usr/bin/env python3
"""Compares two text files token by token; numbers may differ by a tolerance.

Strategy-invariance tests compare what piper-interp prints for a serial step
and for a strategy (microbatches, replicas): the same text, with every number
equal to within --rel (relative) or --abs (absolute) tolerance. Reassociated
sums (microbatch accumulation) make bit-for-bit equality the wrong test.
Exits 1 with the first differing line on a mismatch.
"""

import argparse
import math
import re
import sys

NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(inf|nan)$")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--rel", type=float, default=1e-9)
    parser.add_argument("--abs", type=float, default=1e-12)
    args = parser.parse_args()
    with open(args.expected) as f:
        expected = f.read().splitlines()
    with open(args.actual) as f:
        actual = f.read().splitlines()
    if len(expected) != len(actual):
        print(f"numdiff: {len(expected)} lines expected, {len(actual)} found")
        return 1
    worst = 0.0
    compared = 0
    for line, (a, b) in enumerate(zip(expected, actual), 1):
        ta, tb = a.replace(",", " ").split(), b.replace(",", " ").split()
        if len(ta) != len(tb):
            print(f"numdiff: line {line} differs:\n  {a}\n  {b}")
            return 1
        for x, y in zip(ta, tb):
            if x == y:
                if NUMBER.match(x):
                    compared += 1
                continue
            if not (NUMBER.match(x) and NUMBER.match(y)):
                print(f"numdiff: line {line} differs:\n  {a}\n  {b}")
                return 1
            fx, fy = float(x), float(y)
            diff = abs(fx - fy)
            if not (diff <= args.abs or diff <= args.rel * max(abs(fx), abs(fy))):
                print(f"numdiff: line {line}: {x} vs {y} (difference {diff:g})"
                      f"\n  {a}\n  {b}")
                return 1
            compared += 1
            if max(abs(fx), abs(fy)) > 0:
                worst = max(worst, diff / max(abs(fx), abs(fy)))
    print(f"numdiff: {compared} numbers agree (worst relative difference "
          f"{worst:.1e})")
    return 0 if compared else 1


if __name__ == "__main__":
    sys.exit(main())
