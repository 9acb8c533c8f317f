// Malformed directive lists get one located error each (the JSON path of
// the offending field and what was expected) and a non-zero exit.
// RUN: split-file %s %t
// RUN: not piper-directives %t/case0.json 2>&1 | FileCheck %s --check-prefix=CASE0
// RUN: not piper-directives %t/case1.json 2>&1 | FileCheck %s --check-prefix=CASE1
// RUN: not piper-directives %t/case2.json 2>&1 | FileCheck %s --check-prefix=CASE2
// RUN: not piper-directives %t/case3.json 2>&1 | FileCheck %s --check-prefix=CASE3
// RUN: not piper-directives %t/case4.json 2>&1 | FileCheck %s --check-prefix=CASE4
// RUN: not piper-directives %t/case5.json 2>&1 | FileCheck %s --check-prefix=CASE5
// RUN: not piper-directives %t/case6.json 2>&1 | FileCheck %s --check-prefix=CASE6
// RUN: not piper-directives %t/case7.json 2>&1 | FileCheck %s --check-prefix=CASE7
// RUN: not piper-directives %t/case8.json 2>&1 | FileCheck %s --check-prefix=CASE8
// RUN: not piper-directives %t/case9.json 2>&1 | FileCheck %s --check-prefix=CASE9
// RUN: not piper-directives %t/case10.json 2>&1 | FileCheck %s --check-prefix=CASE10
// RUN: not piper-directives %t/case11.json 2>&1 | FileCheck %s --check-prefix=CASE11
// RUN: not piper-directives %t/case12.json 2>&1 | FileCheck %s --check-prefix=CASE12
// RUN: not piper-directives %t/case13.json 2>&1 | FileCheck %s --check-prefix=CASE13
// RUN: not piper-directives %t/case14.json 2>&1 | FileCheck %s --check-prefix=CASE14
// CASE0: piper-directives: error: {{.*}}case0.json: invalid JSON: [3:0, byte=18]: Unexpected EOF
// CASE1: piper-directives: error: {{.*}}case1.json: directives[0]: unknown directive 'plcae' (expected split, split_backward, place, replicate, shard, order, schedule, balance or recompute)
// CASE2: piper-directives: error: {{.*}}case2.json: directives[0].place: unknown key 'device' (expected one of: filter, devices, stream)
// CASE3: piper-directives: error: {{.*}}case3.json: directives[0].place.filter.PP: a tag value must be an integer or a string
// CASE4: piper-directives: error: {{.*}}case4.json: directives[0].place.devices.pp: expected an integer of at least 0, got -1
// CASE5: piper-directives: error: {{.*}}case5.json: directives[0].split.n: expected an integer of at least 1, got 0
// CASE6: piper-directives: error: {{.*}}case6.json: directives[0].shard.kind: expected "expert" or "tensor", got "pipeline"
// CASE7: piper-directives: error: {{.*}}case7.json: directives[0].shard.row: applies to "kind": "tensor" only
// CASE8: piper-directives: error: {{.*}}case8.json: directives[0].replicate.shard_params: contradicts "zero": 1
// CASE9: piper-directives: error: {{.*}}case9.json: directives[0].replicate.devices: expected a list of strings
// CASE10: piper-directives: error: {{.*}}case10.json: directives[0].order: expected at least two groups to order
// CASE11: piper-directives: error: {{.*}}case11.json: directives[0].schedule.name: expected a string
// CASE12: piper-directives: error: {{.*}}case12.json: mesh: a mesh name must be an identifier
// CASE13: piper-directives: error: {{.*}}case13.json: (top level): unknown key 'steps' (expected one of: mesh, directives)
// CASE14: piper-directives: error: {{.*}}case14.json: directives[0]: expected an object with one key naming the directive, such as {"place": {...}}
// RUN: not piper-directives %t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not piper-directives %t/case15.json 2>&1 | FileCheck %s --check-prefix=CASE15
// RUN: not piper-directives %t/case16.json 2>&1 | FileCheck %s --check-prefix=CASE16
// MISSING: piper-directives: error: cannot read '{{.*}}missing.json': No such file or directory

// CASE15: error: {{.*}}case15.json: directives[0].balance: unknown key 'layers' (expected one of: stages, cost, device, microbatches, grad_axes, expert_axes, memory_limit)
// CASE16: error: {{.*}}case16.json: directives[0].balance.memory_limit: expected a positive whole number of bytes

//--- case0.json
{"directives": [

//--- case1.json
[{"plcae": {}}]

//--- case2.json
[{"place": {"filter": {}, "device": {"pp": 0}}}]

//--- case3.json
[{"place": {"filter": {"PP": [0]}, "devices": {"pp": 0}}}]

//--- case4.json
[{"place": {"devices": {"pp": -1}}}]

//--- case5.json
[{"split": {"n": 0}}]

//--- case6.json
[{"shard": {"kind": "pipeline", "devices": ["ep"]}}]

//--- case7.json
[{"shard": {"devices": ["ep"], "row": ["*.wo"]}}]

//--- case8.json
[{"replicate": {"devices": ["dp"], "zero": 1, "shard_params": true}}]

//--- case9.json
[{"replicate": {"devices": "dp"}}]

//--- case10.json
[{"order": [{"PP": 0}]}]

//--- case11.json
[{"schedule": {}}]

//--- case12.json
{"mesh": "my mesh", "directives": []}

//--- case13.json
{"steps": []}

//--- case14.json
[["place"]]

//--- case15.json
[{"balance": {"stages": 2, "layers": 4}}]

//--- case16.json
[{"balance": {"stages": 2, "memory_limit": -5}}]
