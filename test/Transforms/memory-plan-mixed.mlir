// Memory plan and communication under bf16-mixed count the real bytes. The
// tiny GPT has 6224 parameters (24896 bytes in f32). Its f32 master weights
// (4 bytes a parameter), f32 gradients (4) and AdamW moments (4 + 4) are
// 16 bytes a parameter, as in f32 (plus 8 bytes for each of the 21 AdamW
// step counters); the bf16 activations are what shrinks, and the bf16
// copies of the weights are not saved for the backward (it casts the master
// weights again): saved activations are 8192 bytes, not 8192 + 2 x 6224 =
// 20640, and the peak falls from 142892 to 121388 bytes.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-opt %t/gpt.mlir --piper-autodiff --piper-optimizer --piper-build-dag --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=F32
// RUN: piper-opt %t/gpt.mlir --piper-mixed-precision --piper-autodiff --piper-optimizer --piper-build-dag --piper-memory-plan -o /dev/null | FileCheck %s --check-prefix=MIXED

// F32: all: peak 142892 at step 3 of 4 'BW{PP=0}'
// F32-NEXT: params 24896 grads 24896 optimizer 49960 activations 16384 comm 0 other 26756
// MIXED: all: peak 121388 at step 3 of 4 'BW{PP=0}'
// MIXED-NEXT: params 24896 grads 24896 optimizer 49960 activations 8192 comm 0 other 13444

// Gradients are reduced in f32 over data-parallel replicas: 4 bytes a
// parameter.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=2 --batch=1 -o %t/dp.mlir
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/dp.json
// RUN: piper-directives %t/dp.json -o %t/dp.strategy.mlir
// RUN: piper-opt %t/dp.mlir --piper-mixed-precision --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/dp.strategy.mlir" --transform-interpreter --piper-comm-report -o /dev/null | FileCheck %s --check-prefix=COMM
// COMM: all          all_reduce      dp       dp_grad        21          24896
