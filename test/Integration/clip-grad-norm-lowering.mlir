// How a plan compiled with --clip-grad-norm clips (lib/Conversion/
// ClipGradNorm.h): every gradient the program applies is added to the
// step's sum of squares, weighted by 1 / (devices holding the same
// elements), before one piper_clip_finish; each gradient is then scaled
// (piper_clip_scale) before the update body runs. Without the flag nothing
// of it is emitted.
// RUN: rm -rf %t && mkdir -p %t
// RUN: for z in 0 2; do echo "{\"mesh\": \"mesh\", \"directives\": [{\"replicate\": {\"filter\": {}, \"devices\": [\"dp\"], \"zero\": $z}}]}" > %t/zero$z.json; done
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=2 --batch=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir --directives=%t/zero0.json --clip-grad-norm=1 --emit=kernels | FileCheck %s --check-prefix=DP -enable-var-scope
// RUN: piper-compile %t/mlp.mlir --directives=%t/zero2.json --clip-grad-norm=1 --emit=kernels | FileCheck %s --check-prefix=ZERO2
// RUN: piper-compile %t/mlp.mlir --directives=%t/zero0.json --emit=kernels | FileCheck %s --check-prefix=OFF
// DualPipeV: each rank's updates run after all of its backward launches,
// even where the schedule put one stage's update before the other's
// backward.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --pp=4 --dtype=f64 --mesh=pp=2 --batch=1 -o %t/dpv.mlir
// RUN: piper-compile %t/dpv.mlir --directives=%t/dpv.json --clip-grad-norm=1 --emit=kernels | FileCheck %s --check-prefix=DPV
// An update ordered before another stage's backward moves after it and
// after that backward's reductions, whose wait precedes the norm.
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"order": [{"PP": 1, "PASS": "UPD"}, {"PP": 0, "PASS": "BW"}]}]}' > %t/ord.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=dp=2 --batch=1 -o %t/ord.mlir
// RUN: piper-compile %t/ord.mlir --directives=%t/ord.json --emit=programs | FileCheck %s --check-prefix=ORDER
// RUN: piper-compile %t/ord.mlir --directives=%t/ord.json --clip-grad-norm=1 --emit=kernels | FileCheck %s --check-prefix=ORD
// RUN: not piper-compile %t/mlp.mlir --clip-grad-norm=-1 -o %t/bad.plan 2>&1 | FileCheck %s --check-prefix=BAD

// Data parallel (ZeRO-0): each of the 6 gradients is whole on both
// replicas, so each counts 1/2. At the update launch (#3, after F, BI, BW):
// DP-LABEL: func.func @step.all(
// DP:         call @piper_trace_begin(%c3_i64)
// DP-NEXT:    %[[W:.*]] = arith.constant 5.000000e-01 : f64
// DP-NEXT:    bufferization.to_buffer
// DP-NEXT:    memref.cast
// DP-NEXT:    call @piper_clip_accumulate_f64(%{{.*}}, %[[W]]) : (memref<*xf64>, f64) -> ()
// DP-COUNT-5: call @piper_clip_accumulate_f64(%{{.*}}, %{{.*}}) : (memref<*xf64>, f64) -> ()
// DP-NOT:     piper_clip_accumulate
// DP:         call @piper_clip_finish() : () -> ()
// DP-COUNT-6: call @piper_clip_scale_f64(
// DP-NOT:     piper_clip
// DP:         call @step.UPD.PP0(
// DP-NOT:     call @piper_clip
// DP: func.func private @piper_clip_finish()
// ZeRO-2: each replica adds its own chunk of the reduce-scattered gradient,
// counted once.
// ZERO2:         call @piper_trace_begin(%c3_i64)
// ZERO2-NEXT:    %[[W:.*]] = arith.constant 1.000000e+00 : f64
// ZERO2-NEXT:    bufferization.to_buffer
// ZERO2-NEXT:    memref.cast
// ZERO2-NEXT:    call @piper_clip_accumulate_f64(%{{.*}}, %[[W]])
// ZERO2:         call @piper_clip_finish()
// OFF-NOT: piper_clip
// DPV-LABEL: func.func @step.pp0(
// DPV:         call @piper_clip_finish()
// DPV-NOT:     call @step.B{{[IW]}}.
// DPV:         call @step.UPD.PP{{[03]}}(
// DPV-NOT:     call @step.B{{[IW]}}.
// DPV:         call @step.UPD.PP{{[03]}}(
// DPV-LABEL: func.func @step.pp1(
// DPV:         call @piper_clip_finish()
// DPV-NOT:     call @step.B{{[IW]}}.
// DPV:         return
// ORDER:     piper.launch "UPD{PP=1}"
// ORDER:     piper.launch "BW{PP=0}"
// ORD:       call @step.BW.PP0(
// ORD:       call @piper_comm_ireduce_scatter_f64(
// ORD:       call @piper_comm_ireduce_scatter_f64(
// ORD:       call @piper_comm_wait(
// ORD:       call @piper_clip_finish()
// ORD:       call @step.UPD.PP1{{(.zero)?}}(
// ORD:       call @step.UPD.PP0{{(.zero)?}}(
// BAD: piper-compile: --clip-grad-norm must be finite and non-negative
