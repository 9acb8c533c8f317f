// RUN: split-file %s %t
// transform.piper.schedule_from_csv imports PyTorch pipelining schedules
// (the golden files of PyTorch's tests) as temporal edges, and
// --piper-export-schedule writes the same per-rank actions back.
//
// ZB1P, 4 stages interleaved on 2 ranks (stage s on rank s % 2), 8
// microbatches, written with B for the input gradient (older PyTorch).
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=2 -o %t/mlp4.mlir
// RUN: sed 's|@CSV@|%piper_src_root/test/unit/Schedule/Inputs/zb1p_2rank_2stagep_compute.csv|' %t/zb1p.mlir > %t/zb1p.in.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/zb1p.in.mlir" --transform-interpreter -o %t/zb1p.dag.mlir
// RUN: piper-opt %t/zb1p.dag.mlir --piper-export-schedule="format=csv b-for-input=true" -o /dev/null > %t/zb1p.csv
// RUN: piper-schedule --import=%piper_src_root/test/unit/Schedule/Inputs/zb1p_2rank_2stagep_compute.csv --format=csv --b-for-input > %t/zb1p.ref.csv
// RUN: diff %t/zb1p.csv %t/zb1p.ref.csv
// RUN: FileCheck %s --check-prefix=ZB1P < %t/zb1p.dag.mlir
// The imported order computes what the unscheduled DAG computes.
// RUN: sed '/schedule_from_csv/d' %t/zb1p.in.mlir > %t/unscheduled.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/unscheduled.mlir" --transform-interpreter -o %t/unscheduled.dag.mlir
// RUN: piper-interp %t/zb1p.dag.mlir --steps=2 --print-grads > %t/zb1p.txt
// RUN: piper-interp %t/unscheduled.dag.mlir --steps=2 --print-grads > %t/unscheduled.txt
// RUN: diff %t/zb1p.txt %t/unscheduled.txt
//
// DualPipeV, 8 stages in V order on 4 ranks, 10 microbatches, with
// OVERLAP_F_B pairs.
// RUN: piper-gen --config=tiny-mlp --layers=8 --pp=8 --dtype=f64 --mesh=pp=4 -o %t/mlp8.mlir
// RUN: sed 's|@CSV@|%piper_src_root/test/unit/Schedule/Inputs/dualpipev_4rank_10mb.csv|' %t/dualpipev.mlir > %t/dualpipev.in.mlir
// RUN: piper-opt %t/mlp8.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/dualpipev.in.mlir" --transform-interpreter -o %t/dualpipev.dag.mlir
// RUN: piper-opt %t/dualpipev.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/dualpipev.csv
// RUN: piper-schedule --import=%piper_src_root/test/unit/Schedule/Inputs/dualpipev_4rank_10mb.csv --format=csv > %t/dualpipev.ref.csv
// RUN: diff %t/dualpipev.csv %t/dualpipev.ref.csv
// RUN: FileCheck %s --check-prefix=DPV < %t/dualpipev.csv

// Rank 0 starts 0F0, 0F1, 2F0 (the fixture's idle cell carries no edge).
// ZB1P:      piper.task "F{PP=0,MB=0}"
// ZB1P:      piper.task "F{PP=2,MB=0}" {{.*}}after = ["F{PP=0,MB=1}"]
// ZB1P:      piper.task "F{PP=0,MB=1}" {{.*}}after = ["F{PP=0,MB=0}"]

// DPV: 0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,(0F7;7B3)OVERLAP_F_B,(7F4;0B0)OVERLAP_F_B,

//--- zb1p.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 8 microbatches : (!transform.any_op) -> !transform.any_op
    %r0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %r2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %rank0 = transform.merge_handles %r0, %r2 : !transform.any_op
    %x0 = transform.piper.place %rank0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %r1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %r3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %rank1 = transform.merge_handles %r1, %r3 : !transform.any_op
    %x1 = transform.piper.place %rank1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule_from_csv file "@CSV@" in %root : !transform.any_op
    transform.yield
  }
}

//--- dualpipev.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 10 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %s7 = transform.piper.match_nodes {PP = 7} in %root : (!transform.any_op) -> !transform.any_op
    %rank0 = transform.merge_handles %s0, %s7 : !transform.any_op
    %x0 = transform.piper.place %rank0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %s6 = transform.piper.match_nodes {PP = 6} in %root : (!transform.any_op) -> !transform.any_op
    %rank1 = transform.merge_handles %s1, %s6 : !transform.any_op
    %x1 = transform.piper.place %rank1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %s5 = transform.piper.match_nodes {PP = 5} in %root : (!transform.any_op) -> !transform.any_op
    %rank2 = transform.merge_handles %s2, %s5 : !transform.any_op
    %x2 = transform.piper.place %rank2 on @mesh {pp = 2} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %s4 = transform.piper.match_nodes {PP = 4} in %root : (!transform.any_op) -> !transform.any_op
    %rank3 = transform.merge_handles %s3, %s4 : !transform.any_op
    %x3 = transform.piper.place %rank3 on @mesh {pp = 3} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule_from_csv file "@CSV@" in %root : !transform.any_op
    transform.yield
  }
}
