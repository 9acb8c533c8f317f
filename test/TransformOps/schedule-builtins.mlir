// The built-in schedules not covered by schedule.mlir, written onto split,
// placed DAGs of a 4-stage MLP: the per-rank actions read back by
// --piper-export-schedule equal the library's (piper-schedule) for GPipe
// and ZB-H1 (one stage per rank), interleaved 1F1B (stages 0, 2 on rank 0
// and 1, 3 on rank 1) and ZB-V (V order: 0, 3 on rank 0 and 1, 2 on
// rank 1); the zero-bubble orders compute the unscheduled step exactly.
// RUN: split-file %s %t
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=4 -o %t/mlp4.mlir
// RUN: piper-gen --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=2 -o %t/mlp4r2.mlir
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/gpipe.mlir" --transform-interpreter -o %t/gpipe.dag.mlir
// RUN: piper-opt %t/gpipe.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/gpipe.csv
// RUN: piper-schedule --schedule=gpipe --pp=4 --microbatches=4 --format=csv > %t/gpipe.ref.csv
// RUN: diff %t/gpipe.csv %t/gpipe.ref.csv
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/zb-h1.mlir" --transform-interpreter -o %t/zb-h1.dag.mlir
// RUN: piper-opt %t/zb-h1.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/zb-h1.csv
// RUN: piper-schedule --schedule=zb-h1 --pp=4 --microbatches=8 --format=csv > %t/zb-h1.ref.csv
// RUN: diff %t/zb-h1.csv %t/zb-h1.ref.csv
// RUN: piper-opt %t/mlp4r2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/interleaved-1f1b.mlir" --transform-interpreter -o %t/interleaved-1f1b.dag.mlir
// RUN: piper-opt %t/interleaved-1f1b.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/interleaved-1f1b.csv
// RUN: piper-schedule --schedule=interleaved-1f1b --pp=2 --microbatches=4 --chunks=2 --format=csv > %t/interleaved-1f1b.ref.csv
// RUN: diff %t/interleaved-1f1b.csv %t/interleaved-1f1b.ref.csv
// RUN: piper-opt %t/mlp4r2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/zb-v.mlir" --transform-interpreter -o %t/zb-v.dag.mlir
// RUN: piper-opt %t/zb-v.dag.mlir --piper-export-schedule=format=csv -o /dev/null > %t/zb-v.csv
// RUN: piper-schedule --schedule=zb-v --pp=2 --microbatches=4 --format=csv > %t/zb-v.ref.csv
// RUN: diff %t/zb-v.csv %t/zb-v.ref.csv
// RUN: piper-opt %t/mlp4.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/zb-h1-unscheduled.mlir" --transform-interpreter -o %t/zb-h1-unscheduled.dag.mlir
// RUN: piper-interp %t/zb-h1.dag.mlir --steps=2 --print-grads > %t/zb-h1.txt
// RUN: piper-interp %t/zb-h1-unscheduled.dag.mlir --steps=2 --print-grads > %t/zb-h1-unscheduled.txt
// RUN: diff %t/zb-h1.txt %t/zb-h1-unscheduled.txt
// RUN: piper-opt %t/mlp4r2.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/zb-v-unscheduled.mlir" --transform-interpreter -o %t/zb-v-unscheduled.dag.mlir
// RUN: piper-interp %t/zb-v.dag.mlir --steps=2 --print-grads > %t/zb-v.txt
// RUN: piper-interp %t/zb-v-unscheduled.dag.mlir --steps=2 --print-grads > %t/zb-v-unscheduled.txt
// RUN: diff %t/zb-v.txt %t/zb-v-unscheduled.txt
// RUN: FileCheck %s --input-file=%t/zb-h1.csv

// ZB-H1 on rank 0 of 4 with 8 microbatches: four forwards warm up, input
// gradients then alternate with forwards, and weight gradients wait for the
// slots that would otherwise be bubbles.
// CHECK: 0F0,0F1,0F2,0F3,0I0,0F4,0I1,0F5,0I2,0F6,0I3,0F7,0I4,0W0,

//--- gpipe.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 4 microbatches : (!transform.any_op) -> !transform.any_op
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    %s2 = transform.piper.match_nodes {PP = 2} in %root : (!transform.any_op) -> !transform.any_op
    %x2 = transform.piper.place %s2 on @mesh {pp = 2} : (!transform.any_op) -> !transform.any_op
    %s3 = transform.piper.match_nodes {PP = 3} in %root : (!transform.any_op) -> !transform.any_op
    %x3 = transform.piper.place %s3 on @mesh {pp = 3} : (!transform.any_op) -> !transform.any_op
    transform.piper.schedule "gpipe" in %root : !transform.any_op
    transform.yield
  }
}

//--- zb-h1.mlir
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
    transform.piper.schedule "zb-h1" in %root : !transform.any_op
    transform.yield
  }
}

//--- interleaved-1f1b.mlir
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
    transform.piper.schedule "interleaved-1f1b" in %root : !transform.any_op
    transform.yield
  }
}

//--- zb-v.mlir
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
    transform.piper.schedule "zb-v" in %root : !transform.any_op
    transform.yield
  }
}

//--- zb-h1-unscheduled.mlir
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

//--- zb-v-unscheduled.mlir
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
