// One qwen3_1b pipeline stage compiled with --target=cuda at a reduced
// width (hidden 256, 2 layers: bench/gpu/qwen3-stage.sh --tiny; the full
// width is the benchmark's default, ~5 minutes here): the same kernels as
// the published model's stages (embedding, q/k RMSNorm, RoPE, grouped-query
// attention, top-2 MoE, LM head and loss, their backward, AdamW), and for
// each of the two roles every kernel is an sm_90 cubin whose PTX ptxas
// assembles again and whose entries the cubin holds
// (test/utils/check-cubins.py, no MLIR).
// REQUIRES: ptxas
// RUN: sh -c 'PIPER_BIN=$(dirname $(command -v piper-compile)) %piper_src_root/bench/gpu/qwen3-stage.sh --tiny' | FileCheck %s

// CHECK: piper-compile --target=cuda: {{.*}} 2 roles
// CHECK: step.pp0.so: [[N0:[0-9]+]] fatbins, [[N0]] cubins for sm_90, [[N0]] PTX accepted by ptxas, [[N0]] kernels
// CHECK: step.pp1.so: [[N1:[0-9]+]] fatbins, [[N1]] cubins for sm_90, [[N1]] PTX accepted by ptxas, [[N1]] kernels
// CHECK: all 2 roles:
