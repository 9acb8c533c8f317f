"""Sends SIGKILL or SIGSTOP to one rank of a running MPI job, from outside,
at a random point, and checks that the whole job ends within a bound with a
message naming that rank.

  signal_rank.py --ranks N --seed S --bound 10 [--cases 'R:SIG,...'] -- CMD...

CMD (an `mpiexec -np N piper-run ...` line) is started once per case, in a
session of its own. The rank's process is found among CMD's descendants by
its OMPI_COMM_WORLD_RANK (or PMI_RANK) and, once the job has printed its
first step, signalled after a delay drawn from random.Random(S) (0 to 1.5
s: inside a step, a collective, a send or a receive, wherever it is then).
At start-up a rank stopped inside its connection to the launcher can leave
Open MPI 4.1.4's mpiexec deadlocked in PMIx_server_finalize after every rank
has ended (PMIx 4.2.2; docs/Limits.md): such a case, where no rank is left,
the launcher said it ends the job and a line names the cause, is reported as
what it is instead of FAIL. Each case prints one line:

  np=N rank=R SIGKILL after 0.83 s: ended in 1.2 s (exit 137): <the line naming rank R>

or FAIL with the reason (no end within the bound, exit code 0, no line
naming the rank). Whatever is left of the session is killed at the end. The
exit code is 1 when any case failed.
"""

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time

from session_job import SessionJob, descendants


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read().strip()
    except OSError:
        return None
    if comm != "piper-run":
        return None
    for var in env:
        for key in (b"OMPI_COMM_WORLD_RANK=", b"PMI_RANK="):
            if var.startswith(key):
                return int(var[len(key):])
    return None


def live_ranks(root):
    """The piper-run processes under `root` that have not exited (a zombie
    has: only its launcher has not collected it)."""
    live = []
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/stat") as f:
                name, rest = f.read().rsplit(")", 1)
        except OSError:
            continue
        if name.endswith("(piper-run") and rest.split()[0] != "Z":
            live.append(pid)
    return live


def launcher_ended_job(output):
    """Whether the launcher said that it is ending the job (Open MPI's
    mpiexec, after a rank's non-zero exit or death)."""
    text = " ".join(output.split())
    return any(s in text for s in ("thus causing the job to be terminated",
                                   "the job has been aborted",
                                   "mpiexec noticed that process rank"))


def naming_line(output, rank, at_start):
    """The first line of `output` that blames `rank` for the job's end (at
    start-up, before MPI is up, the waiting rank's start-up deadline, which
    cannot know which rank never came)."""
    patterns = [rf"piper-rt: rank \d+ of \d+: start-up .* did not finish"] if at_start else []
    patterns += [
        rf"process rank {rank} .*(exited on signal|killed|stopped)",
        rf"piper-rt: rank \d+ of \d+: rank {rank} sent no heartbeat",
        rf"piper-rt: rank \d+ of \d+: .*\brank {rank}\b.*(dead|failed|lost)",
    ]
    for line in output.splitlines():
        if any(re.search(p, line) for p in patterns):
            return line.strip()
    return None


def run_case(cmd, ranks, rank, sig, delay, bound, at_start):
    label = (f"np={ranks} rank={rank} {sig.name} "
             f"{delay:.2f} s after {'its start' if at_start else 'step 1'}")
    keep = lambda line, kept: (len(kept) < 2000 or "piper-r" in line
                               or "rank" in line)
    with SessionJob(cmd, watch={"step": r"^step \d+ loss"}, keep=keep) as job:
        proc = job.proc
        if not at_start and not job.wait_for("step", 60):
            return f"FAIL {label}: the job printed no step\n" + job.output(20)
        target = None
        for _ in range(600):
            target = next((p for p in descendants(proc.pid)
                           if rank_of(p) == rank), None)
            if target:
                break
            time.sleep(0.002)
        if target is None:
            return f"FAIL {label}: no process of rank {rank}"
        time.sleep(delay)
        if proc.poll() is not None:
            return f"FAIL {label}: the job ended before the signal"
        os.kill(target, sig)
        start = time.monotonic()
        try:
            rc = proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            output = job.output()
            named = naming_line(output, rank, at_start)
            if (at_start and named and launcher_ended_job(output)
                    and not live_ranks(proc.pid)):
                return (f"{label}: every rank ended within {bound:g} s, the "
                        f"launcher hung in its own finalize (upstream, "
                        f"docs/Limits.md): {named}")
            return (f"FAIL {label}: still running {bound} s after the signal\n"
                    + job.output(20))
        took = time.monotonic() - start
        job.join_reader()
        output = job.output()
        if rc == 0:
            return f"FAIL {label}: exit code 0\n{output[-2000:]}"
        named = naming_line(output, rank, at_start)
        if named is None:
            return f"FAIL {label}: no line names rank {rank}\n{output[-2000:]}"
        return f"{label}: ended in {took:.1f} s (exit {rc}): {named}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bound", type=float, default=10.0)
    parser.add_argument("--cases", default="",
                        help="R:KILL or R:STOP, comma-separated "
                             "(default: every rank, both signals)")
    parser.add_argument("--at-start", action="store_true",
                        help="signal 0 to 0.3 s after the rank's process "
                             "appears (start-up: MPI_Init, loading the plan) "
                             "instead of 0 to 1.5 s after the first step")
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    cases = ([(int(r), s) for r, s in (c.split(":") for c in args.cases.split(","))]
             if args.cases else
             [(r, s) for s in ("KILL", "STOP") for r in range(args.ranks)])
    rng = random.Random(args.seed)
    failed = False
    for rank, name in cases:
        delay = rng.uniform(0.0, 0.3 if args.at_start else 1.5)
        line = run_case(cmd, args.ranks, rank, getattr(signal, "SIG" + name),
                        delay, args.bound, args.at_start)
        failed |= line.startswith("FAIL")
        print(line, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
