// RUN: split-file %s %t
// transform.piper.schedule writes a library schedule onto a split, placed
// DAG as temporal edges per device group (and overlap pairs for F&B), and
// --piper-export-schedule reads the same per-rank actions back.
//
// 1F1B over 4 stages (one per rank) and 8 microbatches.
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=4 -o %t/mlp4.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter -o %t/1f1b.dag.mlir
// RUN: FileCheck %s --check-prefix=ONEF < %t/1f1b.dag.mlir
// RUN: piper-opt %t/1f1b.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/1f1b.csv
// RUN: piper-schedule --schedule=1f1b --pp=4 --microbatches=8 --format=csv > %t/1f1b.ref.csv
// RUN: diff %t/1f1b.csv %t/1f1b.ref.csv
// RUN: FileCheck %s --check-prefix=ONEF-CSV < %t/1f1b.csv
// The order changes when nodes run, not what they compute: the same losses
// and gradients as the unscheduled split DAG, to the last bit.
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/unscheduled4.mlir" --transform-interpreter -o %t/unscheduled4.dag.mlir
// RUN: piper-interp %t/1f1b.dag.mlir --steps=2 --print-grads > %t/1f1b.txt
// RUN: piper-interp %t/unscheduled4.dag.mlir --steps=2 --print-grads > %t/unscheduled4.txt
// RUN: diff %t/1f1b.txt %t/unscheduled4.txt
//
// DualPipeV: 4 stages in V order on 2 ranks (stages 0 and 3 on rank 0,
// 1 and 2 on rank 1), 4 microbatches, with overlapped F&B pairs.
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=2 -o %t/mlp4v.mlir
// RUN: piper-opt %t/mlp4v.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/dualpipev.mlir" --transform-interpreter -o %t/dualpipev.dag.mlir
// RUN: FileCheck %s --check-prefix=DPV < %t/dualpipev.dag.mlir
// RUN: piper-opt %t/dualpipev.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/dualpipev.csv
// RUN: piper-schedule --schedule=dualpipev --pp=2 --microbatches=4 --format=csv > %t/dualpipev.ref.csv
// RUN: diff %t/dualpipev.csv %t/dualpipev.ref.csv
// RUN: piper-opt %t/dualpipev.dag.mlir --piper-export-schedule=format=grid -o /dev/null | FileCheck %s --check-prefix=DPV-GRID
// RUN: piper-opt %t/mlp4v.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/unscheduled4v.mlir" --transform-interpreter -o %t/unscheduled4v.dag.mlir
// RUN: piper-interp %t/dualpipev.dag.mlir --steps=2 --print-grads > %t/dualpipev.txt
// RUN: piper-interp %t/unscheduled4v.dag.mlir --steps=2 --print-grads > %t/unscheduled4v.txt
// RUN: diff %t/dualpipev.txt %t/unscheduled4v.txt

// Rank 0 of 1F1B: four forwards warm up, then each forward waits for the
// backward (both halves, one group) four microbatches before it.
// ONEF:      piper.task "F{PP=0,MB=0}"
// ONEF-NOT:  after
// ONEF-SAME: devices = {pp = 0 : i64}
// ONEF:      piper.task "BI{PP=0,MB=0}" {{.*}}after = ["F{PP=0,MB=3}"]
// ONEF:      piper.task "BW{PP=0,MB=0}" {{.*}}after = ["F{PP=0,MB=3}"]
// ONEF:      piper.task "F{PP=0,MB=1}" {{.*}}after = ["F{PP=0,MB=0}"]
// ONEF:      piper.task "F{PP=0,MB=4}" {{.*}}after = ["BI{PP=0,MB=0}", "BW{PP=0,MB=0}"]
// The loss and gradients are summed by their data edges alone.
// ONEF:      piper.accumulate "accumulate(F{PP=3}#0)"

// ONEF-CSV:      0F0,0F1,0F2,0F3,0B0,0F4,0B1,0F5,0B2,0F6,0B3,0F7,0B4,0B5,0B6,0B7
// ONEF-CSV-NEXT: 1F0,1F1,1F2,1B0,1F3,1B1,1F4,1B2,1F5,1B3,1F6,1B4,1F7,1B5,1B6,1B7
// ONEF-CSV-NEXT: 2F0,2F1,2B0,2F2,2B1,2F3,2B2,2F4,2B3,2F5,2B4,2F6,2B5,2F7,2B6,2B7
// ONEF-CSV-NEXT: 3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3F4,3B4,3F5,3B5,3F6,3B6,3F7,3B7

// DualPipeV pairs rank 0's forward of stage 0 on microbatch 3 with the
// backward of stage 3 on microbatch 1: one group, the forward and the input
// gradient naming each other; the weight gradient was split off earlier
// (3I0, 3W0) and follows its input gradient as an action of its own.
// DPV:     piper.task "BW{PP=3,MB=0}" {{.*}} {after = ["BI{PP=3,MB=0}"], devices = {pp = 0 : i64}, pass
// DPV:     piper.task "BI{PP=3,MB=1}" {{.*}} {after = ["F{PP=3,MB=1}"], devices = {pp = 0 : i64}, overlap = "F{PP=0,MB=3}"
// DPV:     piper.task "BW{PP=3,MB=1}" {{.*}} {after = ["F{PP=3,MB=1}"], devices = {pp = 0 : i64}, pass
// DPV:     piper.task "F{PP=0,MB=3}" {{.*}} {after = ["F{PP=3,MB=1}"], devices = {pp = 0 : i64}, overlap = "BI{PP=3,MB=1}"

// DPV-GRID:      rank 0 |0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3;3B1---- .   3F2;0B0---- 3B2---- .   3F3;0B1---- 3B3---- 0I2 0W2 0I3 0W3
// DPV-GRID-NEXT: rank 1 |.   1F0 2F0 1F1 2F1 1F2 2B0---- 2F2;1B0---- 1F3;2B1---- 2F3;1B1---- 2B2---- 1B2---- .   2I3 1I3 2W3 1W3

//--- 1f1b.mlir
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
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

//--- unscheduled4.mlir
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
    transform.yield
  }
}

//--- dualpipev.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "dualpipev" in %root : !transform.any_op
    transform.yield
  }
}

//--- unscheduled4v.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
