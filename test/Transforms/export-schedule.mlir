// RUN: split-file %s %t
// --piper-export-schedule reads per-rank action lists back from a DAG and
// prints them through the schedule library.
//
// Bidirectional DualPipe on 2 ranks, 4 microbatches: microbatches 0 and 1
// run stage s on rank s, microbatches 2 and 3 run it on rank 1 - s (each
// rank holds both stages, as DualPipe keeps two copies of the parameters).
// RUN: piper-gen --config=tiny-mlp --pp=2 --dtype=f64 --mesh=pp=2 -o %t/mlp2.mlir
// RUN: piper-opt %t/mlp2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/dualpipe.mlir" --transform-interpreter -o %t/dualpipe.dag.mlir
// RUN: piper-opt %t/dualpipe.dag.mlir --piper-export-schedule=format=grid -o /dev/null > %t/dualpipe.grid
// The loss of microbatches 2 and 3 (entering at rank 1, leaving at rank 0)
// is sent to rank 1, where microbatch 0's is summed, so both directions
// partition into verified programs.
// RUN: FileCheck %s --check-prefix=SUMS < %t/dualpipe.dag.mlir
// RUN: piper-opt %t/dualpipe.dag.mlir --piper-partition --piper-verify-programs -o /dev/null
// RUN: piper-schedule --schedule=dualpipe --pp=2 --microbatches=4 --format=grid > %t/dualpipe.ref.grid
// RUN: diff %t/dualpipe.grid %t/dualpipe.ref.grid
// RUN: FileCheck %s --check-prefix=GRID < %t/dualpipe.grid
// RUN: piper-opt %t/dualpipe.dag.mlir --piper-export-schedule=format=chrome -o /dev/null | FileCheck %s --check-prefix=CHROME
// RUN: piper-opt %t/dualpipe.dag.mlir --piper-export-schedule=format=svg -o /dev/null | FileCheck %s --check-prefix=SVG
// Both directions compute the step of the unscheduled DAG.
// RUN: sed '/piper.schedule/d' %t/dualpipe.mlir > %t/unscheduled.mlir
// RUN: piper-opt %t/mlp2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/unscheduled.mlir" --transform-interpreter -o %t/unscheduled.dag.mlir
// RUN: piper-interp %t/dualpipe.dag.mlir --steps=2 --print-grads > %t/dualpipe.txt
// RUN: piper-interp %t/unscheduled.dag.mlir --steps=2 --print-grads > %t/unscheduled.txt
// RUN: diff %t/dualpipe.txt %t/unscheduled.txt
// A DAG without temporal edges exports in IR order (one microbatch after
// the other), each backward as one B.
// RUN: piper-opt %t/unscheduled.dag.mlir --piper-export-schedule=format=grid -o /dev/null | FileCheck %s --check-prefix=PLAIN

// Library stages 2 and 3 are the second direction (DAG stages 0 and 1 on
// microbatches 2 and 3).
// SUMS: piper.transfer "F{PP=1,MB=2}#0->{pp=1}" %{{.*}} from {pp = 0 : i64} to {pp = 1 : i64}
// SUMS: piper.accumulate "accumulate(F{PP=1}#0)"

// GRID:      rank 0 |0F0 3F0 0F1 3B0---- 3F1;0B0---- 3B1---- 0I1 0W1
// GRID-NEXT: rank 1 |2F0 1F0 2F1 1B0---- 1F1;2B0---- 1B1---- 2I1 2W1

// CHROME: "traceEvents"
// CHROME: {"name":"(3F1;0B0)OVERLAP_F_B","cat":"F&B","ph":"X","pid":0,"tid":0,"ts":5000,"dur":3000

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: <text x="4" y="26">rank 0</text>

// PLAIN:      rank 0 |0F0 . . . 0B0---- 0F1 . . . 0B1---- 3F0 3B0---- . . . 3F1 3B1---- . .
// PLAIN-NEXT: rank 1 |. 1F0 1B0---- . . . 1F1 1B1---- 2F0 . . . . 2B0---- 2F1 . . . 2B1----

//--- dualpipe.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0_0 = transform.piper.match_nodes {PP = 0, MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0_0 = transform.piper.place %s0_0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1_0 = transform.piper.match_nodes {PP = 1, MB = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x1_0 = transform.piper.place %s1_0 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s0_1 = transform.piper.match_nodes {PP = 0, MB = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x0_1 = transform.piper.place %s0_1 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1_1 = transform.piper.match_nodes {PP = 1, MB = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1_1 = transform.piper.place %s1_1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s0_2 = transform.piper.match_nodes {PP = 0, MB = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x0_2 = transform.piper.place %s0_2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s1_2 = transform.piper.match_nodes {PP = 1, MB = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x1_2 = transform.piper.place %s1_2 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s0_3 = transform.piper.match_nodes {PP = 0, MB = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x0_3 = transform.piper.place %s0_3 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s1_3 = transform.piper.match_nodes {PP = 1, MB = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x1_3 = transform.piper.place %s1_3 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "dualpipe" in %root : !transform.any_op
    transform.yield
  }
}
