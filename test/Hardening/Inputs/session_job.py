"""A command run in a session of its own (a launcher and its ranks), with
its output (stdout and stderr) read line by line on a thread, shared by
signal_rank.py, fault_bound.py and pause_job.py, and the processes under
a launcher (descendants).

  with SessionJob(cmd, watch={"step": r"step \\d+ loss"}) as job:
      job.wait_for("step", 60)    # True once a line matched, else False
      job.seen["step"]            # time.monotonic() of the first match
      job.output()                # the lines kept so far

Leaving the block kills whatever is left of the session (the launcher and
its ranks, stopped or not) and collects it. `keep(line, kept)` decides
which lines are kept (default: all).
"""

import os
import re
import signal
import subprocess
import threading
import time


def descendants(root):
    """The process ids under `root`, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


class SessionJob:
    def __init__(self, cmd, watch=None, keep=None):
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.lines, self.seen = [], {}
        self._watch = {name: re.compile(p) for name, p in (watch or {}).items()}
        self._events = {name: threading.Event() for name in self._watch}
        self._keep = keep or (lambda line, kept: True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace")
            if self._keep(line, self.lines):
                self.lines.append(line)
            for name, pattern in self._watch.items():
                if name not in self.seen and pattern.search(line):
                    self.seen[name] = time.monotonic()
                    self._events[name].set()

    def wait_for(self, name, timeout):
        return self._events[name].wait(timeout)

    def output(self, last=None):
        return "".join(self.lines if last is None else self.lines[-last:])

    def join_reader(self):
        """Waits (5 s at most) for the output of a job that has ended."""
        self._thread.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.join_reader()
        return False
