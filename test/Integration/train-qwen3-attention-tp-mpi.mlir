// Qwen3-style attention (piper-gen --heads=4 --kv-heads=2 --qk-norm
// --rope-theta=500: grouped-query attention, per-head q/k RMSNorm, rotary
// embeddings) under tensor parallelism: q, k, v, gate and up split by
// columns (2 query heads and 1 key/value head per rank; the rotary
// embedding and the q/k norms run on a rank's heads), wo and down by rows;
// the q/k norm weights' gradients, sums over every head, are all-reduced
// over tp. Trained 5 AdamW steps by piper-run on 2 ranks and, with the
// head tied to the embedding, on PP2 x TP2 (4 ranks, 1F1B): every loss and
// every final parameter equal the serial interpreter's to 1e-9 (%numdiff).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}, {"schedule": {"name": "1f1b"}}]}' > %t/pptp.json
// RUN: piper-gen --config=tiny-gpt --heads=4 --kv-heads=2 --qk-norm --rope-theta=500 --dtype=f64 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.params > %t/gpt.txt

// RUN: piper-gen --config=tiny-gpt --heads=4 --kv-heads=2 --qk-norm --rope-theta=500 --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json -o %t/tp.plan
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=5 --params-out=%t/tp.params > %t/tp.txt
// RUN: %numdiff %t/gpt.txt %t/tp.txt && %numdiff %t/gpt.params %t/tp.params
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json --emit=kernels | FileCheck %s --check-prefix=BODY

// Tied head over PP2 x TP2.
// RUN: piper-gen --config=tiny-gpt --heads=4 --kv-heads=2 --qk-norm --rope-theta=500 --tie-embeddings --dtype=f64 --mesh=dp=1 --batch=2 -o %t/tied.mlir
// RUN: piper-interp %t/tied.mlir --steps=5 --optimizer=adamw --params-out=%t/tied.params > %t/tied.txt
// RUN: piper-gen --config=tiny-gpt --heads=4 --kv-heads=2 --qk-norm --rope-theta=500 --tie-embeddings --dtype=f64 --mesh=dp=1,pp=2,tp=2 --pp=2 --batch=1 -o %t/pptp.mlir
// RUN: piper-compile %t/pptp.mlir --directives=%t/pptp.json -o %t/pptp.plan
// RUN: %mpiexec -np 4 piper-run %t/pptp.plan --steps=5 --params-out=%t/pptp.params > %t/pptp.txt
// RUN: %numdiff %t/tied.txt %t/pptp.txt && %numdiff %t/tied.params %t/pptp.params

// One rank's attention: 2 of the 4 query heads (8 channels) read 1 of the 2
// key/value heads (4 channels), rotated over their heads.
// BODY: call @piper_attention_2x8x8_h2_kv1_f64(
// BODY: call @piper_attention_vjp012_2x8x8_h2_kv1_f64(
// BODY: piper_comm_all_reduce
