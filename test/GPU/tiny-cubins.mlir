// The tiny GPT (two pipeline stages under 1F1B: two roles) and the tiny MoE
// compiled with --target=cuda: plan.json records the target and every
// role's object carries cubin ELFs for sm_90 (EM_CUDA, sm in e_flags),
// which MLIR's own ptxas call produced, and PTX that ptxas assembles again
// (test/utils/check-cubins.py reads the objects without MLIR and unpacks
// the compressed PTX). f32 and bf16-mixed alike.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --pp=2 --mesh=pp=2 -o %t/gpt.mlir
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f32 --mesh=dp=1 -o %t/moe.mlir
// RUN: piper-compile %t/gpt.mlir --target=cuda --directives=%S/../../examples/strategies/tiny-pp2-1f1b.json -o %t/gpt.plan
// RUN: piper-compile %t/moe.mlir --target=cuda -o %t/moe.plan
// RUN: piper-compile %t/gpt.mlir --target=cuda --precision=bf16-mixed --directives=%S/../../examples/strategies/tiny-pp2-1f1b.json -o %t/gpt-bf16.plan
// RUN: python3 %piper_src_root/test/utils/check-cubins.py %t/gpt.plan sm_90 | FileCheck %s --check-prefix=GPT
// RUN: python3 %piper_src_root/test/utils/check-cubins.py %t/moe.plan sm_90 | FileCheck %s --check-prefix=MOE
// RUN: python3 %piper_src_root/test/utils/check-cubins.py %t/gpt-bf16.plan sm_90 | FileCheck %s --check-prefix=GPT
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/gpt.plan/plan.json
// A CPU piper-run says in one line that it cannot run the plan.
// RUN: not piper-run %t/gpt.plan --steps=1 2>&1 | FileCheck %s --check-prefix=REFUSE
// The checker fails on a CPU plan.
// RUN: piper-compile %t/moe.mlir -o %t/cpu.plan
// RUN: not python3 %piper_src_root/test/utils/check-cubins.py %t/cpu.plan sm_90 | FileCheck %s --check-prefix=CPU

// GPT: {{.*}}.so: [[N:[0-9]+]] fatbins, [[N]] cubins for sm_90, [[N]] PTX accepted by ptxas, [[N]] kernels
// GPT-NEXT: {{.*}}.so: [[M:[0-9]+]] fatbins, [[M]] cubins for sm_90, [[M]] PTX accepted by ptxas, [[M]] kernels
// GPT-NEXT: all 2 roles: {{[0-9]+}} cubins for sm_90, {{[0-9]+}} PTX accepted by ptxas
// MOE: all {{[0-9]+}} roles: {{[0-9]+}} cubins for sm_90, {{[0-9]+}} PTX accepted by ptxas

// PLAN: "gpu_arch": "sm_90",
// PLAN: "target": "cuda",

// REFUSE: the plan was compiled for --target=cuda (sm_90); this piper-run runs cpu plans
// REFUSE-NOT: error

// CPU: check-cubins: plan.json records target None, gpu_arch None; expected cuda, sm_90
