// Every transform op translated from a JSON directive carries the line and
// column of that directive, so a semantic error found when the directive
// runs (a filter matching nothing, a coordinate off the mesh) points into
// the user's JSON file with its source line, not into the generated
// PLAN/strategy.mlir.
// RUN: split-file %s %t
// RUN: piper-directives %t/pp2.json | FileCheck %s --check-prefix=LOC
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.mlir
// RUN: not piper-compile %t/gpt.mlir --directives=%t/nomatch.json -o %t/plan 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: not piper-compile %t/gpt.mlir --directives=%t/offmesh.json -o %t/plan 2>&1 | FileCheck %s --check-prefix=OFFMESH
// RUN: not piper-compile %t/gpt.mlir --directives=%t/bare.json -o %t/plan 2>&1 | FileCheck %s --check-prefix=BARE

// The split's match and the split itself both come from line 3, column 3.
// LOC: transform.piper.match_nodes {} in %root {{.*}} loc("{{.*}}pp2.json":3:3)
// LOC-NEXT: transform.piper.split {{.*}} loc("{{.*}}pp2.json":3:3)
// LOC: transform.piper.place {{.*}} {pp = 1} {{.*}} loc("{{.*}}pp2.json":5:3)
// LOC: transform.piper.order {{.*}} loc("{{.*}}pp2.json":6:3)
// LOC: transform.piper.schedule "1f1b" {{.*}} loc("{{.*}}pp2.json":7:3)

// NOMATCH: nomatch.json:5:3: error: filter {PP = 7 : i64} matches no DAG node
// NOMATCH-NEXT: {"place": {"filter": {"PP": 7}, "devices": {"pp": 1}}},
// NOMATCH-NOT: strategy.mlir

// OFFMESH: offmesh.json:4:3: error: axis 'pp' of @mesh has size 2; coordinate 5 is out of range
// OFFMESH-NOT: strategy.mlir

// A bare list (no "mesh" object) is located the same way.
// BARE: bare.json:2:2: error: filter {PP = 3 : i64} matches no DAG node

//--- pp2.json
{"mesh": "mesh",
 "directives": [
  {"split": {"filter": {}, "n": 2}},
  {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}},
  {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}},
  {"order": [{"PP": 0, "MB": 0}, {"PP": 0, "MB": 1}]},
  {"schedule": {"name": "1f1b"}}
 ]}

//--- nomatch.json
{"mesh": "mesh",
 "directives": [
  {"split": {"filter": {}, "n": 2}},
  {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}},
  {"place": {"filter": {"PP": 7}, "devices": {"pp": 1}}},
  {"schedule": {"name": "1f1b"}}
 ]}

//--- offmesh.json
{"mesh": "mesh",
 "directives": [
  {"split": {"filter": {}, "n": 2}},
  {"place": {"filter": {"PP": 0}, "devices": {"pp": 5}}}
 ]}

//--- bare.json
[{"split": {"filter": {}, "n": 2}},
 {"place": {"filter": {"PP": 3}, "devices": {"pp": 1}}}]
