// A strategy written as Piper's JSON directive list becomes the same
// transform script one would write by hand: applied to tiny MoE (PP2 x DP2
// x EP2, 2 microbatches, 1F1B), both give the same DAG, byte for byte.
// RUN: split-file %s %t
// RUN: piper-directives %t/strategy.json -o %t/from-json.mlir
// RUN: FileCheck %s --input-file=%t/from-json.mlir
// RUN: piper-gen --model=moe --config=tiny-moe --pp=2 --mesh=pp=2,dp=2,ep=2 --dtype=f64 -o %t/moe.mlir
// RUN: piper-opt %t/moe.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/from-json.mlir" --transform-interpreter -o %t/json.out.mlir
// RUN: piper-opt %t/moe.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/by-hand.mlir" --transform-interpreter -o %t/hand.out.mlir
// RUN: diff %t/json.out.mlir %t/hand.out.mlir
// Piper's shard_grads / shard_params flags are ZeRO-2 / ZeRO-3; filters
// print with sorted keys; order groups nest.
// RUN: piper-directives %t/flags.json | FileCheck %s --check-prefix=FLAGS

// CHECK:      %nodes0 = transform.piper.match_nodes {} in %root
// CHECK-NEXT: %split1 = transform.piper.split %nodes0 into 2 microbatches
// CHECK-NEXT: %nodes2 = transform.piper.match_nodes {PP = 0} in %root
// CHECK-NEXT: %transfers3 = transform.piper.place %nodes2 on @mesh {pp = 0} stream "pp"
// CHECK:      transform.piper.shard %{{.*}} expert over @mesh ["ep"] :
// CHECK:      transform.piper.replicate %{{.*}} over @mesh ["dp", "ep"] zero = 1 where {EP = "none"} :
// CHECK:      transform.piper.replicate %{{.*}} over @mesh ["dp"] zero = 1 where {EP = "*"} :
// CHECK:      transform.piper.schedule "1f1b" in %root : !transform.any_op

// FLAGS: transform.piper.replicate %nodes0 over @mesh ["dp"] zero = 2 bucket_size = 4096 {grad_stream = "grads", param_stream = "params"} :
// FLAGS: transform.piper.replicate %nodes2 over @mesh ["dp"] zero = 3 :
// FLAGS: transform.piper.match_nodes {MB = 0, PASS = "F", PP = 1} in %root
// FLAGS: transform.piper.order [{PP = 0}, [{PASS = "F"}, {MB = 1, PASS = "B"}], {PP = 1}] in %root : !transform.any_op
// FLAGS: transform.piper.shard %{{.*}} tensor over @mesh ["tp"] column ["*.wq", "*.wk"] row ["*.wo"] sequence_parallel stream "tp" :

//--- strategy.json
{"mesh": "mesh",
 "directives": [
  {"split": {"filter": {}, "n": 2}},
  {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}},
  {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}},
  {"shard": {"filter": {}, "kind": "expert", "devices": ["ep"]}},
  {"replicate": {"filter": {}, "devices": ["dp", "ep"], "zero": 1, "where": {"EP": "none"}}},
  {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1, "where": {"EP": "*"}}},
  {"schedule": {"name": "1f1b"}}
 ]}

//--- by-hand.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} stream "pp" : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} stream "pp" : (!transform.any_op) -> !transform.any_op
    %nodes = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %ep = transform.piper.shard %nodes expert over @mesh ["ep"] : (!transform.any_op) -> !transform.any_op
    %dense = transform.piper.replicate %nodes over @mesh ["dp", "ep"] zero = 1 where {EP = "none"} : (!transform.any_op) -> !transform.any_op
    %experts = transform.piper.replicate %nodes over @mesh ["dp"] zero = 1 where {EP = "*"} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

//--- flags.json
[
  {"replicate": {"devices": ["dp"], "shard_grads": true, "bucket_size": 4096, "grad_stream": "grads", "param_stream": "params"}},
  {"replicate": {"devices": ["dp"], "shard_grads": true, "shard_params": true}},
  {"split": {"filter": {"PP": 1, "PASS": "F", "MB": 0}, "n": 1}},
  {"order": [{"PP": 0}, [{"PASS": "F"}, {"PASS": "B", "MB": 1}], {"PP": 1}]},
  {"shard": {"kind": "tensor", "devices": ["tp"], "column": ["*.wq", "*.wk"], "row": ["*.wo"], "sequence_parallel": true, "stream": "tp"}}
]
