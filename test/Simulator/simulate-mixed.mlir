// The simulator under bf16-mixed (docs/MixedPrecision.md): a 2-layer GPT of
// width 1024 over dp = 2 on A100s. The bf16 NN ops run at the bf16 peak
// (compute 6.823 -> 4.739 ms, of which about 0.34 ms are the casts of the
// master weights, the forward's and the backward's own: the backward casts
// again rather than keeping the forward's bf16 copy), the gradient
// all-reduce moves the same f32 bytes (0.797 ms in both), and the bf16
// activations lower the peak (1296.1 -> 1008.1 MiB). MFU is against the
// model's matrix type (TF32 for f32, bf16 for bf16-mixed).
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --hidden=1024 --ffn=4096 --heads=8 --seq=512 --vocab=8192 --layers=2 --dtype=f32 --mesh=dp=2 --batch=4 -o %t/gpt.mlir
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/dp.json
// RUN: piper-directives %t/dp.json -o %t/dp.mlir
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/dp.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/f32.mlir
// RUN: piper-opt %t/gpt.mlir --piper-mixed-precision --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/dp.mlir" --transform-interpreter --piper-partition --piper-verify-programs -o %t/mixed.mlir
// RUN: piper-opt %t/f32.mlir --piper-simulate -o /dev/null | FileCheck %s --check-prefix=F32
// RUN: piper-opt %t/mixed.mlir --piper-simulate -o /dev/null | FileCheck %s --check-prefix=MIXED

// F32: 1.064e+12 FLOP/step, MFU 44.7%
// F32: @step.all  {}             6.823         0.797         0.797         0.000    0.0%    1296.1
// MIXED: 1.064e+12 FLOP/step, MFU 30.8%
// MIXED: @step.all  {}             4.739         0.797         0.797         0.000    0.0%    1008.1
