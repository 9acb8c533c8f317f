// REQUIRES: mpi
// The watchdogs never abort a healthy job: not at the liveness watchdog's
// shortest setting on a loaded machine, not when the whole job is paused
// for longer than that setting or the wait timeout and goes on, not with
// an absurd timeout.
// (rank-faults-mpi.mlir holds the faults they must catch.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}]}' > %t/dp4.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/pp.mlir
// RUN: piper-compile %t/pp.mlir --directives=%t/pp2.json -o %t/pp2.plan
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=4 --batch=1 -o %t/dp.mlir
// RUN: piper-compile %t/dp.mlir --directives=%t/dp4.json -o %t/dp4.plan

// 4 ranks on 2 cores at the shortest setting: a silent predecessor on this
// machine that is visibly running or sleeping (/proc) gets 4 times the
// silence before it is called hung; a stopped one ('T') is called at once.
// RUN: env PIPER_RT_LIVENESS=0.5 %mpiexec -np 4 piper-run %t/dp4.plan --steps=200 | FileCheck %s --check-prefix=HEALTHY
// HEALTHY: step 200 loss

// The whole job (launcher and ranks) stopped for 3 s, 6 times the silence,
// then continued (a ^Z and fg, a virtual machine its host descheduled): no
// rank heard its predecessor over the pause, but none ran to listen either,
// and a watcher does not count the time it did not run itself.
// RUN: env PIPER_RT_LIVENESS=0.5 python3 %S/Inputs/pause_job.py --after 'step 20 loss' --pause 3 --out %t/pause.txt -- %mpiexec -np 4 piper-run %t/dp4.plan --steps=300
// RUN: FileCheck %s --check-prefix=PAUSE --input-file=%t/pause.txt
// PAUSE-NOT: heartbeat
// PAUSE: step 300 loss
// PAUSE-NOT: heartbeat
// PAUSE: pause_job: paused 3.0 s, then ended (exit 0)

// The same pause, three times, under a wait timeout of 2 s
// (PIPER_RT_TIMEOUT): a rank waiting for a peer when the job stopped did
// not run for 3 s either, and that is not time the peer kept it waiting.
// (Before waits discounted their own stalls, most pauses caught a rank in a
// wait and aborted the job.)
// RUN: python3 %S/Inputs/pause_job.py --after 'step 20 loss' --pause 3 --times 3 --out %t/pause-timeout.txt -- %mpiexec -x PIPER_RT_TIMEOUT=2 -np 4 piper-run %t/dp4.plan --steps=2000
// RUN: FileCheck %s --check-prefix=PAUSE-TIMEOUT --input-file=%t/pause-timeout.txt
// PAUSE-TIMEOUT-NOT: timeout
// PAUSE-TIMEOUT: step 2000 loss
// PAUSE-TIMEOUT-NOT: timeout
// PAUSE-TIMEOUT: pause_job: paused 3.0 s 3 times, then ended (exit 0)

// A timeout below 0.1 s aborted every healthy job at its first collective;
// it now falls back to the default with one warning.
// RUN: %mpiexec -x PIPER_RT_TIMEOUT=1e-9 -np 2 piper-run %t/pp2.plan --steps=2 2>&1 | FileCheck %s --check-prefix=TINY
// TINY: piper-rt: invalid argument: PIPER_RT_TIMEOUT='1e-9' is outside 0.1 to 604800 seconds; using the default of 300 s
// TINY: step 2 loss
