# REQUIRES: torch, mpi
# The GPT-2-style module with its head tied to the token embedding over two
# pipeline stages: wte.weight is read by stage 0 (embedding) and stage 1
# (head), so its gradient sums contributions from both and both stages must
# read the same updated table every step (issue 19's tied parameters:
# partitioning gives each stage a copy of the sum and the update). Every
# loss equals torch's own training of the module to 1e-10.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %S/Inputs/export.py gpt2 %t
# RUN: piper-compile %t/pp-tied.mlir --directives=%S/Inputs/gpt2-pp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/pp-tied.plan
# RUN: %mpiexec -np 2 piper-run %t/pp-tied.plan --steps=5 --params-in=%t/pp-tied.params > %t/pp-tied.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/pp-tied.txt 1e-10 | FileCheck %s
# CHECK: OK: 5 steps
