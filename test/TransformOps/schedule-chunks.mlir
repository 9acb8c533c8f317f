// RUN: split-file %s %t
// A one-stage-per-rank schedule over ranks that each hold several
// consecutive stages (PP tags): each rank's stages run as one stage of the
// library's schedule, forwards in stage order and backwards in reverse. A
// stage made of several chunks is then one DAG node per chunk, so ZeRO-3
// gathers a chunk's parameters, not the whole stage's
// (test/Integration/train-pp-chunks-mpi.mlir).
//
// 1F1B over 2 ranks of two stages each (PP 0, 1 on rank 0; 2, 3 on rank
// 1), 4 microbatches.
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=2 -o %t/mlp4.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/1f1b.mlir" --transform-interpreter -o %t/1f1b.dag.mlir
// RUN: FileCheck %s --check-prefix=ONEF < %t/1f1b.dag.mlir
// --piper-export-schedule reads each chunk back as a stage of its own.
// RUN: piper-opt %t/1f1b.dag.mlir --piper-export-schedule=format=csv -o /dev/null | FileCheck %s --check-prefix=ONEF-CSV
// ONEF-CSV:      0F0,1F0,0F1,1F1,1B0,0B0,0F2,1F2,1B1,0B1,0F3,1F3,1B2,0B2,1B3,0B3
// ONEF-CSV-NEXT: 2F0,3F0,3B0,2B0,2F1,3F1,3B1,2B1,2F2,3F2,3B2,2B2,2F3,3F3,3B3,2B3
// ZB-H1 splits each backward into its input and weight halves, each half
// over the rank's stages in reverse.
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/zbh1.mlir" --transform-interpreter -o %t/zbh1.dag.mlir
// RUN: FileCheck %s --check-prefix=ZBH1 < %t/zbh1.dag.mlir
// The order changes when nodes run, not what they compute: the same
// losses and gradients as the unscheduled DAG, to the last bit.
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/unscheduled.mlir" --transform-interpreter -o %t/unscheduled.dag.mlir
// RUN: piper-interp %t/1f1b.dag.mlir --steps=2 --print-grads > %t/1f1b.txt
// RUN: piper-interp %t/zbh1.dag.mlir --steps=2 --print-grads > %t/zbh1.txt
// RUN: piper-interp %t/unscheduled.dag.mlir --steps=2 --print-grads > %t/unscheduled.txt
// RUN: diff %t/1f1b.txt %t/unscheduled.txt
// RUN: diff %t/zbh1.txt %t/unscheduled.txt
//
// Stages that are not consecutive blocks (0 and 2 on rank 0) are not one
// stage: 1F1B refuses them, naming the shape it runs.
// RUN: not piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/strided.mlir" --transform-interpreter -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRIDED

// Rank 0 of 1F1B (p = 2): F0 F1 B0 F2 B1 F3 B2 B3, each action the group
// of the rank's two chunks (data edges order a group's chunks: stage 1's
// backward before stage 0's), each group after the one before it.
// ONEF:      piper.task "F{PP=0,MB=0}"
// ONEF-NOT:  after
// ONEF-SAME: devices = {pp = 0 : i64}
// ONEF:      piper.task "F{PP=1,MB=0}"
// ONEF-NOT:  after
// ONEF-SAME: devices = {pp = 0 : i64}
// ONEF:      piper.task "BI{PP=1,MB=0}" {{.*}}after = ["F{PP=0,MB=1}", "F{PP=1,MB=1}"]
// ONEF:      piper.task "BW{PP=1,MB=0}" {{.*}}after = ["F{PP=0,MB=1}", "F{PP=1,MB=1}"]
// ONEF:      piper.task "BI{PP=0,MB=0}" {{.*}}after = ["F{PP=0,MB=1}", "F{PP=1,MB=1}"]
// ONEF:      piper.task "BW{PP=0,MB=0}" {{.*}}after = ["F{PP=0,MB=1}", "F{PP=1,MB=1}"]
// ONEF:      piper.task "F{PP=0,MB=1}" {{.*}}after = ["F{PP=0,MB=0}", "F{PP=1,MB=0}"]
// ONEF:      piper.task "F{PP=1,MB=1}" {{.*}}after = ["F{PP=0,MB=0}", "F{PP=1,MB=0}"]
// ONEF:      piper.task "F{PP=0,MB=2}" {{.*}}after = ["BI{PP=1,MB=0}", "BI{PP=0,MB=0}", "BW{PP=1,MB=0}", "BW{PP=0,MB=0}"]

// Rank 1 of ZB-H1: F0 I0 F1 I1 F2 I2 F3 I3 W0 W1 W2 W3 (piper-schedule
// --schedule=zb-h1 --pp=2 --microbatches=4), an I or W the group of both
// chunks' input- or weight-gradient halves.
// ZBH1:      piper.task "BI{PP=3,MB=0}" {{.*}}after = ["F{PP=2,MB=0}", "F{PP=3,MB=0}"]
// ZBH1:      piper.task "BW{PP=3,MB=0}" {{.*}}after = ["BI{PP=3,MB=3}", "BI{PP=2,MB=3}"]
// ZBH1:      piper.task "BI{PP=2,MB=0}" {{.*}}after = ["F{PP=2,MB=0}", "F{PP=3,MB=0}"]
// ZBH1:      piper.task "F{PP=2,MB=1}" {{.*}}after = ["BI{PP=3,MB=0}", "BI{PP=2,MB=0}"]
// ZBH1:      piper.task "BW{PP=3,MB=1}" {{.*}}after = ["BW{PP=3,MB=0}", "BW{PP=2,MB=0}"]

// STRIDED: strided.mlir:13:5: error: 'transform.piper.schedule' op 1f1b runs one stage per rank, or the same number of consecutive stages on every rank, but the DAG has 4 stages (PP tags) on 2 ranks

//--- 1f1b.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}

//--- zbh1.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "zb-h1" in %root : !transform.any_op
    transform.yield
  }
}

//--- unscheduled.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- strided.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    transform.yield
  }
}
