// Crashes: a rank killed (SIGKILL) part way through writing its piece,
// before the commit, or during a training step. The job stops (no hang);
// the next start resumes from the last complete checkpoint, ignoring the
// half-written one with a message, under another strategy (serial), and
// its losses continue the uninterrupted run's exactly (1e-12). With
// --save-sync a checkpoint commits at its step, so a crash loses at most
// one interval; with the default overlapped save, at most one more step.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/dp-z3.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=4 --batch=1 -o %t/dp4.mlir
// RUN: piper-compile %t/dp4.mlir --directives=%t/dp-z3.json -o %t/dp4.plan
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=4 -o %t/serial.mlir
// RUN: piper-compile %t/serial.mlir -o %t/serial.plan
// RUN: %mpiexec -np 4 piper-run %t/dp4.plan --steps=6 > %t/full.txt
// RUN: sed -n '3,6p' %t/full.txt > %t/full.3-6.txt
// RUN: sed -n '5,6p' %t/full.txt > %t/full.5-6.txt

// Rank 1 dies half way through its file of the step-4 save.
// RUN: sh -c '%mpiexec -np 4 piper-run %t/dp4.plan --steps=6 --save=%t/w --save-every=2 --kill-save-rank=1 --kill-save-step=4 --kill-save-point=write > %t/w.out 2>&1; rc=$?; echo "exit $rc" >> %t/w.out; test $rc -ne 0 && test $rc -ne 124'
// RUN: FileCheck %s --check-prefix=WRITE --input-file=%t/w.out
// WRITE: piper-run: rank 1: killed during the save of step 4 (write)
// WRITE-NOT: step 6 loss
// RUN: ls %t/w | FileCheck %s --check-prefix=WDIR
// WDIR: step-00000002
// WDIR-NEXT: step-00000004.tmp
// RUN: piper-run %t/serial.plan --steps=6 --resume=%t/w > %t/w.txt 2> %t/w.err
// RUN: FileCheck %s --check-prefix=RESUME2 --input-file=%t/w.err
// RESUME2: piper-run: ignoring half-written checkpoint {{.*}}/step-00000004.tmp (no index.json)
// RESUME2-NEXT: piper-run: resuming from {{.*}}/step-00000002 after step 2
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/full.3-6.txt %t/w.txt

// Rank 2 dies with every file on disk, before rank 0 writes the index.
// RUN: sh -c '%mpiexec -np 4 piper-run %t/dp4.plan --steps=6 --save=%t/c --save-every=2 --kill-save-rank=2 --kill-save-step=4 --kill-save-point=commit > %t/c.out 2>&1; rc=$?; echo "exit $rc" >> %t/c.out; test $rc -ne 0 && test $rc -ne 124'
// RUN: FileCheck %s --check-prefix=COMMIT --input-file=%t/c.out
// COMMIT: piper-run: rank 2: killed during the save of step 4 (commit)
// RUN: piper-run %t/serial.plan --steps=6 --resume=%t/c > %t/c.txt 2> %t/c.err
// RUN: FileCheck %s --check-prefix=RESUME2 --input-file=%t/c.err
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/full.3-6.txt %t/c.txt
// The half-written save is deleted once a later one commits.
// RUN: piper-run %t/serial.plan --steps=6 --resume=%t/c --save=%t/c --save-every=2 > /dev/null 2>&1
// RUN: ls %t/c | FileCheck %s --check-prefix=CLEAN
// CLEAN: step-00000002
// CLEAN-NEXT: step-00000004
// CLEAN-NEXT: step-00000006
// CLEAN-NOT: tmp

// Rank 3 dies as step 5 starts. Synchronous saves: step 4 is committed.
// RUN: sh -c '%mpiexec -np 4 piper-run %t/dp4.plan --steps=6 --save=%t/s --save-every=2 --save-sync --kill-rank=3 --kill-at-step=5 > %t/s.out 2>&1; rc=$?; test $rc -ne 0 && test $rc -ne 124'
// RUN: piper-run %t/serial.plan --steps=6 --resume=%t/s > %t/s.txt 2> %t/s.err
// RUN: FileCheck %s --check-prefix=RESUME4 --input-file=%t/s.err
// RESUME4: piper-run: resuming from {{.*}}/step-00000004 after step 4
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/full.5-6.txt %t/s.txt
// Overlapped saves: step 4's save commits at the end of step 5 (whatever
// the disk's speed), so a crash as step 6 starts resumes after step 4 too.
// RUN: sh -c '%mpiexec -np 4 piper-run %t/dp4.plan --steps=6 --save=%t/o --save-every=2 --kill-rank=3 --kill-at-step=6 > %t/o.out 2>&1; rc=$?; test $rc -ne 0 && test $rc -ne 124'
// RUN: piper-run %t/serial.plan --steps=6 --resume=%t/o > %t/o.txt 2> %t/o.err
// RUN: FileCheck %s --check-prefix=RESUME4 --input-file=%t/o.err
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/full.5-6.txt %t/o.txt
