"""Stops a whole running job (the launcher and all its ranks, SIGSTOP to its
process tree) for a while, then lets it go on (SIGCONT): what a loaded machine, a
virtual machine whose host deschedules it, or a shell's ^Z and `fg` do to a
job. Nothing in the job failed, so it must finish as if nothing happened;
the liveness watchdog must not take the pause for a hung rank.

  pause_job.py --after 'step 5 loss' --pause 3 [--times N] --out FILE -- CMD...

CMD's output (stdout and stderr) goes to FILE, then one line:

  pause_job: paused 3.0 s, then ended (exit 0)

or FAIL with the reason (the --after line never came, the job ended before
it, or it was still running --limit seconds after the pause). Exit code 1
on FAIL; the job's own exit code is on the line for FileCheck to judge.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

from session_job import SessionJob, descendants


def signal_quietly(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", required=True)
    parser.add_argument("--pause", type=float, default=3.0)
    # Several pauses 0.2 s apart: a fault that needs a rank to be inside a
    # wait when the job stops (most of the time, not always) shows up in
    # one of them.
    parser.add_argument("--times", type=int, default=1)
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument("--out", required=True)
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    with SessionJob(cmd, watch={"after": args.after}) as job:
        if not job.wait_for("after", args.limit):
            result = "FAIL no line matching the --after pattern"
        elif job.proc.poll() is not None:
            result = "FAIL the job ended before it could be paused"
        else:
            # The launcher gives each rank a process group of its own, so
            # the job is the launcher's process tree, not its group.
            tree = [job.proc.pid] + descendants(job.proc.pid)
            for i in range(args.times):
                if i:
                    time.sleep(0.2)
                for pid in tree:
                    signal_quietly(pid, signal.SIGSTOP)
                time.sleep(args.pause)
                for pid in tree:
                    signal_quietly(pid, signal.SIGCONT)
            try:
                rc = job.proc.wait(timeout=args.limit)
            except subprocess.TimeoutExpired:
                result = f"FAIL still running {args.limit:g} s after the pause"
            else:
                job.join_reader()
                times = f" {args.times} times" if args.times > 1 else ""
                result = (f"pause_job: paused {args.pause:.1f} s{times}, then "
                          f"ended (exit {rc})")
    with open(args.out, "w") as f:
        f.write("".join(job.lines))
        f.write(result + "\n")
    print(result)
    sys.exit(1 if result.startswith("FAIL") else 0)


if __name__ == "__main__":
    main()
