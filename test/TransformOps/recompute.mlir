// RUN: split-file %s %t
// transform.piper.recompute on the tiny GPT in two stages (unplaced): an R
// node re-runs stage 0's forward before its backward, which reads R's
// outputs; F stops returning them. With ops = ["attention"] only the
// attention (and the reshape of its output that wo's backward reads) is
// re-run, from the saved q, k and v.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 -o %t/gpt.mlir
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-build-dag -o %t/plain.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/whole.mlir" --transform-interpreter -o %t/whole.out.mlir
// RUN: FileCheck %s --check-prefix=WHOLE --input-file=%t/whole.out.mlir
// RUN: piper-opt %t/plain.mlir --transform-preload-library="transform-library-paths=%t/attn.mlir" --transform-interpreter -o %t/attn.out.mlir
// RUN: FileCheck %s --check-prefix=ATTN --input-file=%t/attn.out.mlir
// Recomputation is deterministic: the same losses and gradients, bit for bit.
// RUN: piper-interp %t/plain.mlir --steps=2 --print-grads > %t/plain.txt
// RUN: piper-interp %t/whole.out.mlir --steps=2 --print-grads > %t/whole.txt
// RUN: piper-interp %t/attn.out.mlir --steps=2 --print-grads > %t/attn.txt
// RUN: diff %t/plain.txt %t/whole.txt
// RUN: diff %t/plain.txt %t/attn.txt
// The JSON form.
// RUN: piper-directives %t/attn.json | FileCheck %s --check-prefix=JSON

// Unplaced, the DAG is one device: stage 1's backward, which reads stage
// 0's output, is the first backward consumer and waits for R.
// WHOLE:      %[[F:.*]] = piper.task "F{PP=0}" @step.F.PP0.kept(%arg0, %arg21, %arg1,
// WHOLE-SAME: -> tensor<16x16xf64>
// WHOLE:      %[[R:.*]]:12 = piper.task "R{PP=0}" @step.F.PP0.R(%arg0, %arg21, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9)
// WHOLE-SAME: pass = #piper<pass B>, recomputes = "F{PP=0}", tags = {PP = 0 : i64}
// WHOLE-NEXT: piper.task "BI{PP=1}" @step.BI.PP1({{.*}}, %[[R]]#0, %arg10) {after = ["R{PP=0}"]
// WHOLE:      piper.task "BI{PP=0}" @step.BI.PP0(%[[R]]#1,
// WHOLE:      piper.task "BW{PP=0}" @step.BW.PP0(%[[R]]#1,
// WHOLE:      func.func private @step.F.PP0.kept({{.*}}) -> tensor<16x16xf64>
// WHOLE:      func.func private @step.F.PP0.R(
// WHOLE-NEXT: piper.embedding
// WHOLE:      piper.attention
// WHOLE:      piper.swiglu
// WHOLE:      return

// ATTN:      %[[F:.*]]:11 = piper.task "F{PP=0}" @step.F.PP0.kept(
// ATTN:      %[[R:.*]] = piper.task "R{PP=0}" @step.F.PP0.R(%[[F]]#6, %[[F]]#7, %[[F]]#8)
// ATTN-SAME: recomputes = "F{PP=0}"
// ATTN-SAME: (tensor<2x8x16xf64>, tensor<2x8x16xf64>, tensor<2x8x16xf64>) -> tensor<16x16xf64>
// ATTN:      func.func private @step.F.PP0.R(
// ATTN-NEXT: piper.attention
// ATTN-NEXT: piper.reshape
// ATTN-NEXT: return

// JSON: %[[N:.*]] = transform.piper.match_nodes {PASS = "F", PP = 0} in %root
// JSON: transform.piper.recompute %[[N]] ops ["attention"]

//--- whole.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.piper.match_nodes {PP = 0, PASS = "F"} in %root : (!transform.any_op) -> !transform.any_op
    %r = transform.piper.recompute %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- attn.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %r = transform.piper.recompute %f ops ["attention"] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

//--- attn.json
{"directives": [{"recompute": {"filter": {"PP": 0, "PASS": "F"}, "ops": ["attention"]}}]}
