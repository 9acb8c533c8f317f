// REQUIRES: mpi
// A rank that stops (SIGSTOP: alive, but its process no longer runs) or
// dies (SIGKILL) during a run ends the whole job within 10 s, with one line
// naming the silent rank and what its watcher was waiting for. The liveness
// watchdog (runtime/backends/mpi/Liveness.cpp) finds a stopped rank from
// its missing heartbeats (PIPER_RT_LIVENESS seconds of silence; 2 here, 5 by
// default); before it, a stopped rank held its peers for PIPER_RT_TIMEOUT
// (300 s by default). Inputs/fault_bound.py holds the bound: 10 s from the
// rank's own "stopped/killed at step" line to the end of the job, non-zero
// exit (start-up on a loaded machine is not part of it).
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}]}' > %t/dp4.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/pp.mlir
// RUN: piper-compile %t/pp.mlir --directives=%t/pp2.json -o %t/pp2.plan
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=4 --batch=1 -o %t/dp.mlir
// RUN: piper-compile %t/dp.mlir --directives=%t/dp4.json -o %t/dp4.plan

// 2 ranks: either one stops.
// RUN: env PIPER_RT_LIVENESS=2 python3 %S/Inputs/fault_bound.py --bound 10 --out %t/stop0.txt -- %mpiexec -np 2 piper-run %t/pp2.plan --steps=50 --kill-rank=0 --kill-at-step=5 --kill-with-sigstop
// RUN: FileCheck %s --check-prefix=STOP0 --input-file=%t/stop0.txt
// STOP0: piper-run: rank 0: stopped at step 5 (--kill-rank)
// STOP0: piper-rt: rank 1 of 2: rank 0 sent no heartbeat for {{[0-9.]+}} s (stopped, hung or dead; PIPER_RT_LIVENESS=2) while rank 1 waits in recv of {{[0-9]+}} f64 from rank 0 tag {{[0-9]+}}; aborting the job
// STOP0: fault_bound: ended in {{[0-9.]+}} s after the fault (exit {{[1-9][0-9]*}})
// RUN: env PIPER_RT_LIVENESS=2 python3 %S/Inputs/fault_bound.py --bound 10 --out %t/stop1.txt -- %mpiexec -np 2 piper-run %t/pp2.plan --steps=50 --kill-rank=1 --kill-at-step=7 --kill-with-sigstop
// RUN: FileCheck %s --check-prefix=STOP1 --input-file=%t/stop1.txt
// STOP1: piper-rt: rank 0 of 2: rank 1 sent no heartbeat for {{[0-9.]+}} s (stopped, hung or dead; PIPER_RT_LIVENESS=2) while rank 0 waits in {{.*}}; aborting the job
// STOP1: fault_bound: ended in {{[0-9.]+}} s after the fault (exit {{[1-9][0-9]*}})

// The default setting (5 s of silence) is also within the bound.
// RUN: python3 %S/Inputs/fault_bound.py --bound 10 --out %t/default.txt -- %mpiexec -np 2 piper-run %t/pp2.plan --steps=50 --kill-rank=1 --kill-at-step=2 --kill-with-sigstop
// RUN: FileCheck %s --check-prefix=DEFAULT --input-file=%t/default.txt
// DEFAULT: piper-rt: rank 0 of 2: rank 1 sent no heartbeat for {{[0-9.]+}} s (stopped, hung or dead; PIPER_RT_LIVENESS=5)
// DEFAULT: fault_bound: ended in {{[0-9.]+}} s after the fault (exit {{[1-9][0-9]*}})

// 4 ranks (ZeRO-1 over dp=4): a middle rank and the last one (whose watcher
// is rank 0, round the ring) stop inside all-reduces.
// RUN: env PIPER_RT_LIVENESS=2 python3 %S/Inputs/fault_bound.py --bound 10 --out %t/stop2.txt -- %mpiexec -np 4 piper-run %t/dp4.plan --steps=50 --kill-rank=2 --kill-at-step=4 --kill-with-sigstop
// RUN: FileCheck %s --check-prefix=STOP2 --input-file=%t/stop2.txt
// STOP2: piper-rt: rank 3 of 4: rank 2 sent no heartbeat for {{[0-9.]+}} s (stopped, hung or dead; PIPER_RT_LIVENESS=2) while rank 3 waits in {{.*}}; aborting the job
// STOP2: fault_bound: ended in {{[0-9.]+}} s after the fault (exit {{[1-9][0-9]*}})
// RUN: env PIPER_RT_LIVENESS=2 python3 %S/Inputs/fault_bound.py --bound 10 --out %t/stop3.txt -- %mpiexec -np 4 piper-run %t/dp4.plan --steps=50 --kill-rank=3 --kill-at-step=6 --kill-with-sigstop
// RUN: FileCheck %s --check-prefix=STOP3 --input-file=%t/stop3.txt
// STOP3: piper-rt: rank 0 of 4: rank 3 sent no heartbeat for {{[0-9.]+}} s (stopped, hung or dead; PIPER_RT_LIVENESS=2) while rank 0 waits in {{.*}}; aborting the job
// STOP3: fault_bound: ended in {{[0-9.]+}} s after the fault (exit {{[1-9][0-9]*}})

// kill -9 of a rank of 4: the launcher names it, within the bound.
// RUN: env PIPER_RT_LIVENESS=2 python3 %S/Inputs/fault_bound.py --bound 10 --out %t/kill1.txt -- %mpiexec -np 4 piper-run %t/dp4.plan --steps=50 --kill-rank=1 --kill-at-step=3
// RUN: FileCheck %s --check-prefix=KILL1 --input-file=%t/kill1.txt
// KILL1: piper-run: rank 1: killed at step 3 (--kill-rank)
// KILL1: {{mpiexec noticed that process rank 1 .*exited on signal 9|rank 2 of 4: rank 1 sent no heartbeat}}
// KILL1: fault_bound: ended in {{[0-9.]+}} s after the fault (exit {{[1-9][0-9]*}})
