// RUN: split-file %s %t
// --piper-simulate runs partitioned device programs in simulated time.
//
// 1F1B on 4 stages, 8 microbatches, fused backward nodes, one transfer
// stream per stage boundary and direction: at unit costs the step takes
// schedules.md's 3m + 3(p-1) = 33 and every rank idles (p-1)(F+B) = 9.
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --mesh=pp=4 -o %t/mlp4.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-optimizer --piper-build-dag=fuse-backward --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/1f1b.programs.mlir
// RUN: piper-opt %t/1f1b.programs.mlir --piper-simulate="costs=unit" -o /dev/null | FileCheck %s --check-prefix=UNIT --match-full-lines --strict-whitespace
// RUN: piper-opt %t/1f1b.programs.mlir --piper-simulate="costs=unit format=chrome" -o /dev/null | FileCheck %s --check-prefix=CHROME
// RUN: piper-opt %t/1f1b.programs.mlir --piper-simulate="costs=unit format=svg" -o /dev/null | FileCheck %s --check-prefix=SVG
//
// The model on an H100 over a heterogeneous mesh: data parallel over EFA,
// the pipeline over NVLink.
// RUN: piper-gen --config=tiny-gpt --pp=2 --mesh=dp=2,pp=2 --dtype=bf16 | sed 's/\[dp = 2, pp = 2\]/[dp = 2 : efa(bandwidth = 6.25, latency = 15), pp = 2 : nvlink]/' > %t/gpt.mlir
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/dp.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/gpt.programs.mlir
// RUN: piper-opt %t/gpt.programs.mlir --piper-simulate="device=h100" -o /dev/null | FileCheck %s --check-prefix=MODEL
//
// Measured times replace the model's: every F takes 100 us.
// RUN: piper-opt %t/gpt.programs.mlir --piper-simulate="calibration=%S/Inputs/calibration.json format=chrome" -o /dev/null | FileCheck %s --check-prefix=CAL

// UNIT:simulated step at unit costs (F = BI = BW = 1, everything else 0)
// UNIT-NEXT:mesh: pp=4 (nvlink 300 GB/s, 3 us)
// UNIT-NEXT:step time 33, bubble 27.3%, communication exposed 0 and hidden 0 per device
// UNIT-NEXT:program    role           compute          comm       exposed          idle  bubble  peak MiB
// UNIT-NEXT:@step.pp0  {pp=0}              24             0             0             9   27.3%       0.0
// UNIT-NEXT:@step.pp1  {pp=1}              24             0             0             9   27.3%       0.0
// UNIT-NEXT:@step.pp2  {pp=2}              24             0             0             9   27.3%       0.0
// UNIT-NEXT:@step.pp3  {pp=3}              24             0             0             9   27.3%       0.0

// Process = program, thread = stream; a unit is a millisecond.
// CHROME: {"displayTimeUnit":"ms","traceEvents":[
// CHROME: {"name":"process_name","ph":"M","pid":0,"args":{"name":"@step.pp0"}}
// CHROME: {"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"compute"}}
// CHROME: {"name":"F{PP=0,MB=0}","cat":"F","ph":"X","pid":0,"tid":0,"ts":0,"dur":1000}
// CHROME: {"name":"B{PP=3,MB=0}","cat":"B","ph":"X","pid":3,"tid":0,"ts":4000,"dur":2000}

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: >@step.pp0 compute</text>
// SVG: <title>F{PP=0,MB=0} [0, 1)</title>

// MODEL: simulated step on 4 x NVIDIA H100 SXM 80GB (h100), model costs
// MODEL-NEXT: mesh: dp=2 (efa 6.25 GB/s, 15 us), pp=2 (nvlink 450 GB/s, 3 us)
// MODEL-NEXT: step time {{[0-9.]+}} ms, bubble {{[0-9.]+}}%, communication exposed {{[0-9.]+}} ms and hidden {{[0-9.]+}} ms per device
// MODEL-NEXT: throughput {{[0-9]+}} tokens/s (64 tokens/step), {{.*}} FLOP/step, MFU {{[0-9.]+}}%
// MODEL:      @step.pp0 {pp=0}
// MODEL-NEXT: @step.pp1 {pp=1}

// CAL: {"name":"F{PP=0,MB=0}","cat":"F","ph":"X","pid":0,"tid":0,"ts":0,"dur":100}

//--- 1f1b.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 8 microbatches : (!transform.any_op) -> !transform.any_op
    %f0 = transform.piper.match_nodes {PP = 0, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %xf0 = transform.piper.place %f0 on @mesh {pp = 0} stream "pp_f0" : (!transform.any_op) -> !transform.any_op
    %f1 = transform.piper.match_nodes {PP = 1, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %xf1 = transform.piper.place %f1 on @mesh {pp = 1} stream "pp_f1" : (!transform.any_op) -> !transform.any_op
    %f2 = transform.piper.match_nodes {PP = 2, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %xf2 = transform.piper.place %f2 on @mesh {pp = 2} stream "pp_f2" : (!transform.any_op) -> !transform.any_op
    %f3 = transform.piper.match_nodes {PP = 3, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %xf3 = transform.piper.place %f3 on @mesh {pp = 3} stream "pp_f3" : (!transform.any_op) -> !transform.any_op
    %b0 = transform.piper.match_nodes {PP = 0, PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %xb0 = transform.piper.place %b0 on @mesh {pp = 0} stream "pp_b0" : (!transform.any_op) -> !transform.any_op
    %b1 = transform.piper.match_nodes {PP = 1, PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %xb1 = transform.piper.place %b1 on @mesh {pp = 1} stream "pp_b1" : (!transform.any_op) -> !transform.any_op
    %b2 = transform.piper.match_nodes {PP = 2, PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %xb2 = transform.piper.place %b2 on @mesh {pp = 2} stream "pp_b2" : (!transform.any_op) -> !transform.any_op
    %b3 = transform.piper.match_nodes {PP = 3, PASS = "B"} in %root : (!transform.any_op) -> !transform.any_op
    %xb3 = transform.piper.place %b3 on @mesh {pp = 3} stream "pp_b3" : (!transform.any_op) -> !transform.any_op
    %u0 = transform.piper.match_nodes {PP = 0, PASS = "UPD"} in %root : (!transform.any_op) -> !transform.any_op
    %xu0 = transform.piper.place %u0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %u1 = transform.piper.match_nodes {PP = 1, PASS = "UPD"} in %root : (!transform.any_op) -> !transform.any_op
    %xu1 = transform.piper.place %u1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %u2 = transform.piper.match_nodes {PP = 2, PASS = "UPD"} in %root : (!transform.any_op) -> !transform.any_op
    %xu2 = transform.piper.place %u2 on @mesh {pp = 2} : (!transform.any_op) -> !transform.any_op
    %u3 = transform.piper.match_nodes {PP = 3, PASS = "UPD"} in %root : (!transform.any_op) -> !transform.any_op
    %xu3 = transform.piper.place %u3 on @mesh {pp = 3} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

//--- dp.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %nodes = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %r = transform.piper.replicate %nodes over @mesh ["dp"] zero = 1 : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}
