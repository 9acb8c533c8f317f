// piper-run checks a plan directory before any rank runs a step
// (runtime/lib/plan/ManifestValidate.cpp, tools/piper-run/Program.h): each
// damaged copy of a compiled plan is one line naming the file and the field
// and exit code 1, never a crash, a hang or a silently different loss.
// Inputs/tamper_plan.py makes each damage.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/good.plan
// RUN: FileCheck %s --check-prefix=RECORDED --input-file=%t/good.plan/plan.json
// RUN: piper-run %t/good.plan --steps=1 | FileCheck %s --check-prefix=GOOD
// RECORDED: "object_bytes": {{[1-9][0-9]*}},
// RECORDED-NEXT: "object_checksum": "{{[0-9a-f]+}}"
// GOOD: step 1 loss
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan negative-shape
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=NEGSHAPE
// NEGSHAPE: piper-run: {{.*}}/plan.json: bad manifest: negative dimension at plan.arguments[0].shape
// NEGSHAPE-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan huge-shape
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=HUGESHAPE
// HUGESHAPE: piper-run: {{.*}}/plan.json: bad manifest: more than 1099511627776 elements at plan.arguments[0].shape
// HUGESHAPE-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan memory
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: piper-run: {{.*}}/plan.json: bad manifest: the plan's arguments and results need 4398046597128 bytes, more than this machine's {{[0-9]+}} at plan.arguments
// MEMORY-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan fewer-inputs
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=FEWER
// FEWER: piper-run: {{.*}}/step.all.so was compiled for input 25:i64[] where the plan describes the end of the inputs (plan.json was edited; recompile the plan)
// FEWER-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan duplicate-input
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=DUPIN
// DUPIN: piper-run: {{.*}}/plan.json: bad manifest: index 0 is listed twice at plan.roles[0].inputs[1]
// DUPIN-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan duplicate-output
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=DUPOUT
// DUPOUT: piper-run: {{.*}}/plan.json: bad manifest: index 0 is listed twice at plan.roles[0].outputs[1]
// DUPOUT-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan dtype
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: piper-run: {{.*}}/step.all.so was compiled for input 6:f64[4,16] where the plan describes 6:f32[4,16] (plan.json was edited; recompile the plan)
// DTYPE-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan update-shape
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=UPDATE
// UPDATE: piper-run: {{.*}}/plan.json: bad manifest: result 1 updates argument 0 of another dtype or shape at plan.results[1].updates
// UPDATE-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan entry-malloc
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=MALLOC
// MALLOC: piper-run: {{.*}}/plan.json: bad manifest: entry 'malloc' is not a plan entry point (piper_entry_...) at plan.roles[0].entry
// MALLOC-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan entry-missing
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: piper-run: {{.*}}/step.all.so has no entry point 'piper_entry_nothing'
// NOENTRY-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan object-path
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=OBJPATH
// OBJPATH: piper-run: {{.*}}/plan.json: bad manifest: object '../../etc/passwd' is not a file name at plan.roles[0].object
// OBJPATH-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan no-checksum
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=NOSUM
// NOSUM: piper-run: the plan records no size and checksum for {{.*}}/step.all.so (written by an older piper-compile; recompile the plan)
// NOSUM-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan truncated
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: piper-run: {{.*}}/step.all.so has 4096 bytes; the plan recorded {{[0-9]+}} (truncated or replaced; recompile the plan)
// TRUNC-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan bitflip
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=FLIP
// FLIP: piper-run: {{.*}}/step.all.so has checksum {{[0-9a-f]+}}; the plan recorded {{[0-9a-f]+}} (corrupted; recompile the plan)
// FLIP-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan mesh-0
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=MESH0
// MESH0: piper-run: {{.*}}/plan.json: bad manifest: an axis has at least one device at plan.mesh.axes[0].size
// MESH0-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan mesh-neg
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=MESHNEG
// MESHNEG: piper-run: {{.*}}/plan.json: bad manifest: an axis has at least one device at plan.mesh.axes[0].size
// MESHNEG-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan mesh-x
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=MESHX
// MESHX: piper-run: {{.*}}/plan.json: bad manifest: expected integer at plan.mesh.axes[0].size
// MESHX-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan mesh-huge
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=MESHHUGE
// MESHHUGE: piper-run: {{.*}}/plan.json: bad manifest: the mesh has more than 1048576 devices at plan.mesh.axes[0].size
// MESHHUGE-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan version-float
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: piper-run: {{.*}}/plan.json: bad manifest: expected an integer at plan.version
// VERSION-NOT: {{.}}
// RUN: python3 %S/Inputs/tamper_plan.py %t/good.plan %t/bad.plan deep
// RUN: not piper-run %t/bad.plan 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: piper-run: {{.*}}/plan.json: [1:256, byte=256]: Nesting deeper than 256 levels
// DEEP-NOT: {{.}}
