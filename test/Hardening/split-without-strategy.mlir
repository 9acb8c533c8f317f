// A parameter whose placement splits it over devices needs a strategy that
// splits its computation: without --directives, piper-compile says so at
// the parameter (it used to fail deep in the lowering with an "unresolved
// materialization" and a page of IR). The same model with a mesh of one
// device compiles.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f32 --mesh=dp=1,ep=2 -o %t/moe.mlir
// RUN: not piper-compile %t/moe.mlir -o %t/moe.plan 2>&1 | FileCheck %s --implicit-check-not="materialization"
// RUN: test ! -e %t/moe.plan/plan.json
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f32 --mesh=dp=1 -o %t/moe1.mlir
// RUN: piper-compile %t/moe1.mlir --emit=programs -o /dev/null

// CHECK: warning: piper-compile: mesh @mesh has 2 devices but no --directives
// CHECK: error: piper-compile: parameter 'layers.0.mlp.experts.w_gate' is split over mesh axis 'ep' (2 devices) by its placement, but no --directives shard its computation; give a strategy that does (e.g. {"shard": {"filter": {}, "kind": "expert", "devices": ["ep"]}}), or a mesh without 'ep'
