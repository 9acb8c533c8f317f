"""Runs a job that injects a fault in itself (piper-run --kill-rank prints
"stopped at step N" or "killed at step N" before it signals itself) and
checks that the whole job ends, with a non-zero exit, within a bound counted
from that line rather than from the launch: start-up on a loaded 2-core
machine takes seconds of its own that say nothing about fault detection.

  fault_bound.py --bound 10 --out FILE -- CMD...

CMD's output (stdout and stderr) goes to FILE, then one line:

  fault_bound: ended in 2.4 s after the fault (exit 3)

or FAIL with the reason (no fault line within --start-limit seconds, still
running `bound` s after it, exit code 0). CMD runs in a session of its own,
killed at the end whatever is left of it. Exit code 1 on FAIL.
"""

import argparse
import subprocess
import sys
import time

from session_job import SessionJob


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bound", type=float, default=10.0)
    parser.add_argument("--start-limit", type=float, default=120.0)
    parser.add_argument("--out", required=True)
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    with SessionJob(cmd, watch={"fault": r"(stopped|killed) at step \d+"}) as job:
        if not job.wait_for("fault", args.start_limit):
            if job.proc.poll() is None:
                result = f"FAIL no fault line within {args.start_limit:g} s"
            else:
                result = (f"FAIL ended (exit {job.proc.returncode}) with no "
                          f"fault line")
        else:
            fault_at = job.seen["fault"]
            try:
                rc = job.proc.wait(timeout=max(
                    0.0, fault_at + args.bound - time.monotonic()))
            except subprocess.TimeoutExpired:
                result = f"FAIL still running {args.bound:g} s after the fault"
            else:
                took = time.monotonic() - fault_at
                result = (f"FAIL exit code 0 {took:.1f} s after the fault"
                          if rc == 0 else
                          f"fault_bound: ended in {took:.1f} s after the "
                          f"fault (exit {rc})")
    lines = job.lines
    with open(args.out, "w") as f:
        f.write("".join(lines))
        f.write(result + "\n")
    print(result)
    sys.exit(1 if result.startswith("FAIL") else 0)


if __name__ == "__main__":
    main()
