// The tiny MLP in two pipeline stages (as in train-pp-mpi.mlir), launched by
// Slurm instead of mpiexec: `srun -n 2 piper-run PLAN` on a throwaway
// one-node cluster (scripts/slurm-local) that this test starts under %t and
// stops again, whatever happens in between (an EXIT trap, and a watchdog
// should the test be killed). OpenMPI's MPI_Init finds its peers through
// Slurm's PMIx plugin; piper-run needs nothing of its own. The losses match
// the serial interpreter, and a wrong rank count (`srun -n 3`) fails with
// the runtime's message.
// REQUIRES: slurm
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-interp %t/mlp.mlir --steps=5 --optimizer=adamw > %t/mlp.interp.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/mlp.pp.mlir
// RUN: piper-compile %t/mlp.pp.mlir --directives=%t/pp2.json -o %t/mlp.pp2.plan

// The cluster lives within this one RUN line.
// RUN: sh -c 'trap "%piper_src_root/scripts/slurm-local stop %t/slurm" EXIT; SLURM_LOCAL_TTL=300 %piper_src_root/scripts/slurm-local start %t/slurm > %t/slurm.env && . %t/slurm.env && %srun -n 2 piper-run %t/mlp.pp2.plan --steps=5 > %t/mlp.srun.txt && { %srun -n 3 piper-run %t/mlp.pp2.plan --steps=1 > %t/np3.txt 2>&1; rc=$?; echo "exit $rc" >> %t/np3.txt; test $rc -ne 0 && test $rc -ne 124; }'
// RUN: %numdiff %t/mlp.interp.txt %t/mlp.srun.txt
// RUN: FileCheck %s --input-file=%t/mlp.srun.txt
// RUN: FileCheck %s --check-prefix=NP --input-file=%t/np3.txt

// CHECK: step 1 loss
// CHECK-NOT: step 1 loss
// CHECK: step 5 loss
// CHECK-NOT: step
// NP: piper-run: piper-rt: invalid argument: rank 0: the mesh (pp=2) has 2 devices but MPI started 3 ranks
// NP-NOT: step 1 loss
