// Planted memory fault: a schedule whose activations do not fit the
// per-device budget is rejected at the first device group over it, with
// the node at its peak; a schedule that fits passes the same budget.
//
// A 4-stage f64 MLP, 8 microbatches: GPipe keeps all 8 microbatches'
// activations (stage 3 peaks at 76328 bytes, stage 1 at 56592), 1F1B at
// most 4 - r of them (stage 1: 48400, stage 3: 56168 bytes), so 60000
// bytes separates them.
// RUN: split-file %s %t
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=4 -o %t/mlp4.mlir
// RUN: sed 's/SCHEDULE/gpipe/' %t/pipeline.mlir > %t/gpipe.mlir
// RUN: sed 's/SCHEDULE/1f1b/' %t/pipeline.mlir > %t/1f1b.mlir
// RUN: not piper-opt %t/mlp4.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/gpipe.mlir" --transform-interpreter --piper-memory-plan=budget=60000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE --implicit-check-not="see current operation"
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter --piper-memory-plan=budget=60000 -o /dev/null | FileCheck %s --check-prefix=ONEF
//
// GPIPE-NOT: pp={{[012]}} needs
// GPIPE: mlp4.mlir:19:16: error: device group pp=3 needs 76328 bytes at its peak (step 31 of 54, 'BW{PP=3,MB=1}'), over the budget of 60000 bytes
// ONEF: pp=1: peak 48400
// ONEF: pp=3: peak 56168

//--- pipeline.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 8 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 2} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 3} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "SCHEDULE" in %root : !transform.any_op
    transform.yield
  }
}
