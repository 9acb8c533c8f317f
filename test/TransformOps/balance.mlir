// transform.piper.balance re-cuts a model into pipeline stages by the cost
// model, counting the embedding, the LM head and the loss.
// RUN: split-file %s %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --vocab=512 --pp=0 -o %t/flat.mlir
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --vocab=512 --pp=2 -o %t/pp2.mlir

// By FLOPs, a 512-word head weighs about half a layer: the second stage
// starts at layer 3's MLP, not at layer 2 as piper-gen's even split does.
// RUN: piper-opt %t/flat.mlir --transform-preload-library="transform-library-paths=%t/flops.mlir" --transform-interpreter=entry-point=__transform_model 2> %t/flops.report | FileCheck %s --check-prefix=FLOPS
// RUN: FileCheck %s --check-prefix=FLOPS-REPORT --input-file=%t/flops.report
// FLOPS-LABEL: func.func @step
// FLOPS-SAME:  [[W:%arg[0-9]+]]: tensor<16xf64> {piper.param = #piper.param<"layers.3.mlp_norm.weight"
// FLOPS:       %[[S0:.*]] = piper.annotate {PP = 0} -> tensor<16x16xf64> {
// FLOPS:         piper.embedding
// FLOPS-COUNT-4: piper.attention
// FLOPS:         piper.yield
// FLOPS-NEXT:  }
// FLOPS-NEXT:  %[[S1:.*]] = piper.annotate {PP = 1} -> tensor<f64> {
// FLOPS-NEXT:    piper.rmsnorm %[[S0]], [[W]]
// FLOPS-NOT:     piper.attention
// FLOPS:         piper.cross_entropy
// FLOPS-NEXT:    piper.yield
// FLOPS-NEXT:  }
// FLOPS-NEXT:  return %[[S1]] : tensor<f64>
// FLOPS-REPORT: remark: '@step' in 2 stages: [0] from piper.embedding (op 0) cost 1.877e+06 bytes 8.433e+05; [1] from piper.rmsnorm (op 64) cost 2.143e+06 bytes 3.983e+05;

// A model already cut (piper-gen --pp=2) is re-cut to the same program.
// RUN: piper-opt %t/pp2.mlir --transform-preload-library="transform-library-paths=%t/flops.mlir" --transform-interpreter=entry-point=__transform_model -o %t/from-pp2.mlir 2> /dev/null
// RUN: piper-opt %t/flat.mlir --transform-preload-library="transform-library-paths=%t/flops.mlir" --transform-interpreter=entry-point=__transform_model -o %t/from-flat.mlir 2> /dev/null
// RUN: diff %t/from-pp2.mlir %t/from-flat.mlir

// The roofline on an A100 charges the head's memory-bound softmax and the
// stage transfers: the cut moves to layer 2's MLP.
// RUN: piper-opt %t/flat.mlir --transform-preload-library="transform-library-paths=%t/roofline.mlir" --transform-interpreter=entry-point=__transform_model -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROOF
// ROOF: [0] from piper.embedding (op 0) cost {{.*}}; [1] from piper.rmsnorm (op 47)

// A memory limit below the FLOP-balanced first stage's 843,264 bytes
// moves the cut earlier, to the start of layer 3 (op 53; layer 3's MLP is
// op 64, layer 2's op 47).
// RUN: piper-opt %t/flat.mlir --transform-preload-library="transform-library-paths=%t/memory.mlir" --transform-interpreter=entry-point=__transform_model -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEM
// MEM: [0] from piper.embedding (op 0) cost 1.646e+06 bytes 7.649e+05; [1] from piper.rmsnorm (op 53)

// MoE: an expert block is one unit and stays whole inside its stage; four
// layers in three stages.
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --layers=4 --pp=2 --mesh=dp=2,ep=2,pp=3 -o %t/moe.mlir
// RUN: piper-opt %t/moe.mlir --transform-preload-library="transform-library-paths=%t/moe-strategy.mlir" --transform-interpreter=entry-point=__transform_model | FileCheck %s --check-prefix=MOE
// MOE:      piper.annotate {PP = 0}
// MOE:        piper.annotate {EP = 0}
// MOE:      piper.annotate {PP = 1}
// MOE:        piper.annotate {EP =
// MOE:      piper.annotate {PP = 2}
// MOE:        piper.annotate {EP = 3}
// MOE:        piper.cross_entropy

// The JSON form goes to the @__transform_model sequence, wherever it is
// listed, and piper-compile applies it before autodiff.
// RUN: piper-directives %t/strategy.json -o %t/from-json.mlir
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/from-json.mlir
// JSON:      transform.named_sequence @__transform_model(%root: !transform.any_op {transform.readonly}) {
// JSON-NEXT:   transform.piper.balance %root into 2 stages {cost = "flops", microbatches = 2, expert_axes = [], memory_limit = 80000000000} : !transform.any_op loc(
// JSON-NEXT:   transform.yield
// JSON:      transform.named_sequence @__transform_main(
// JSON-NOT:  piper.balance
// JSON:      transform.piper.schedule "1f1b"
// RUN: piper-opt %t/flat.mlir --transform-preload-library="transform-library-paths=%t/from-json.mlir" --transform-interpreter=entry-point=__transform_model -o %t/json-model.mlir
// RUN: diff %t/json-model.mlir %t/from-flat.mlir

//--- flops.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_model(%model: !transform.any_op {transform.readonly}) {
    transform.piper.balance %model into 2 stages {cost = "flops", report} : !transform.any_op
    transform.yield
  }
}

//--- roofline.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_model(%model: !transform.any_op {transform.readonly}) {
    transform.piper.balance %model into 2 stages {device = "a100", report} : !transform.any_op
    transform.yield
  }
}

//--- memory.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_model(%model: !transform.any_op {transform.readonly}) {
    transform.piper.balance %model into 2 stages {cost = "flops", memory_limit = 800000, report} : !transform.any_op
    transform.yield
  }
}

//--- moe-strategy.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_model(%model: !transform.any_op {transform.readonly}) {
    transform.piper.balance %model into 3 stages {grad_axes = ["dp"], expert_axes = ["ep"], microbatches = 4} : !transform.any_op
    transform.yield
  }
}

//--- strategy.json
{"mesh": "mesh", "directives": [
  {"split": {"filter": {}, "n": 2}},
  {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}},
  {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}},
  {"balance": {"stages": 2, "cost": "flops", "microbatches": 2, "expert_axes": [], "memory_limit": 8e10}},
  {"schedule": {"name": "1f1b"}}]}
