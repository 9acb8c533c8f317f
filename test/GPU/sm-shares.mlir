// The SM shares of `transform.piper.overlap ... sm_shares [a, b]` in
// plan.json: per role, per stream (the first task of a pair runs on
// "compute", the second on "compute_overlap"); absent without shares. The
// CPU piper-run ignores them: the overlapped plan's losses are those of the
// same split without the overlap. Two shares for one stream of a role are
// refused in one line.
// RUN: rm -rf %t && split-file %s %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%t/overlap.mlir -o %t/overlap.plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/overlap.plan/plan.json
// RUN: piper-compile %t/gpt.mlir --directives=%t/split.mlir -o %t/split.plan
// RUN: FileCheck %s --check-prefix=NONE --input-file=%t/split.plan/plan.json
// RUN: piper-run %t/overlap.plan --steps=3 > %t/overlap.txt
// RUN: piper-run %t/split.plan --steps=3 > %t/split.txt
// RUN: diff %t/overlap.txt %t/split.txt
// RUN: FileCheck %s --check-prefix=LOSS --input-file=%t/overlap.txt
// RUN: not piper-compile %t/gpt.mlir --directives=%t/conflict.mlir -o %t/bad.plan 2>&1 | FileCheck %s --check-prefix=CONFLICT

// PLAN:      "sm_shares": {
// PLAN-NEXT:   "compute": 0.42420000000000002,
// PLAN-NEXT:   "compute_overlap": 0.42420000000000002
// PLAN-NEXT: },
// PLAN-NEXT: "streams": [
// PLAN-NEXT:   "compute",
// PLAN-NEXT:   "compute_overlap"
// PLAN-NEXT: ]

// NONE-NOT: sm_shares

// LOSS: step 3 loss

// CONFLICT: error: piper-compile: SM share 0.3 on stream '{{compute|compute_overlap}}' of step.all, which an earlier launch gave 0.4242 (one SM partition per stream)
// CONFLICT-NOT: error

//--- overlap.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    %f = transform.piper.match_nodes {MB = 1, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %b = transform.piper.match_nodes {MB = 0, PASS = "BI"} in %root : (!transform.any_op) -> !transform.any_op
    transform.piper.overlap %f with %b sm_shares [0.4242, 0.4242] : !transform.any_op, !transform.any_op
    transform.yield
  }
}

//--- split.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- conflict.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 3 microbatches : (!transform.any_op) -> !transform.any_op
    %f = transform.piper.match_nodes {MB = 1, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %b = transform.piper.match_nodes {MB = 0, PASS = "BI"} in %root : (!transform.any_op) -> !transform.any_op
    transform.piper.overlap %f with %b sm_shares [0.4242, 0.4242] : !transform.any_op, !transform.any_op
    %f2 = transform.piper.match_nodes {MB = 2, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %b2 = transform.piper.match_nodes {MB = 1, PASS = "BI"} in %root : (!transform.any_op) -> !transform.any_op
    transform.piper.overlap %f2 with %b2 sm_shares [0.3, 0.3] : !transform.any_op, !transform.any_op
    transform.yield
  }
}
