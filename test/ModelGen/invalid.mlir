// Every bad option is one clear line on stderr and exit code 1.

// RUN: not piper-gen 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: piper-gen: error: give --model=mlp|gpt|moe or --config=NAME (see --list-configs)

// RUN: not piper-gen --config=llama3_8b 2>&1 | FileCheck %s --check-prefix=CONFIG
// CONFIG: piper-gen: error: unknown config 'llama3_8b'; known configs: tiny-mlp, tiny-gpt, tiny-moe, qwen3_1b, qwen3_9b, deepseek_v3

// RUN: not piper-gen --model=cnn 2>&1 | FileCheck %s --check-prefix=MODEL
// MODEL: piper-gen: error: unknown model 'cnn'; expected mlp, gpt or moe

// RUN: not piper-gen --config=tiny-gpt --pp=3 2>&1 | FileCheck %s --check-prefix=PP
// PP: piper-gen: error: --pp=3 is larger than the number of layers (2); every pipeline stage needs at least one layer

// RUN: not piper-gen --config=qwen3_1b --pp=-1 2>&1 | FileCheck %s --check-prefix=PPNEG
// PPNEG: piper-gen: error: --pp must be >= 0, got -1

// RUN: not piper-gen --config=tiny-gpt --heads=3 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: piper-gen: error: --hidden=16 is not divisible by --heads=3

// RUN: not piper-gen --config=tiny-moe --top-k=5 2>&1 | FileCheck %s --check-prefix=TOPK
// TOPK: piper-gen: error: --top-k=5 is larger than --experts=4

// RUN: not piper-gen --config=tiny-gpt --layers=0 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: piper-gen: error: --layers must be >= 1 for --model=gpt, got 0

// A dense config has no experts to build an MoE from.
// RUN: not piper-gen --model=moe --config=tiny-gpt 2>&1 | FileCheck %s --check-prefix=EXPERTS
// EXPERTS: piper-gen: error: --experts must be >= 1 for --model=moe, got 0

// Sizes above the bound of docs/Limits.md (2^24) are refused one by one;
// sizes within it whose tensors could not be counted in 64 bits together.
// RUN: not piper-gen --config=tiny-gpt --batch=10000000000 --seq=10000000000 2>&1 | FileCheck %s --check-prefix=TOKENS
// TOKENS: piper-gen: error: --seq must be <= 16777216 (docs/Limits.md), got 10000000000
// RUN: not piper-gen --config=tiny-gpt --batch=16777216 --seq=16777216 --vocab=16777216 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: piper-gen: error: the model's sizes overflow 64-bit element counts

// RUN: not piper-gen --config=tiny-moe --capacity-factor=-1 2>&1 | FileCheck %s --check-prefix=CF
// CF: piper-gen: error: --capacity-factor must be >= 0 (0: no token is dropped), got -1

// RUN: not piper-gen --config=tiny-gpt --dtype=f16 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: piper-gen: error: unknown dtype 'f16'; expected f32, f64 or bf16

// RUN: not piper-gen --config=tiny-gpt --mesh=dp4 2>&1 | FileCheck %s --check-prefix=MESH-FORM
// MESH-FORM: piper-gen: error: bad mesh axis 'dp4' in --mesh=dp4; expected NAME=SIZE[,NAME=SIZE...], e.g. --mesh=dp=4,pp=2,ep=2

// RUN: not piper-gen --config=tiny-gpt --mesh=dp=4, 2>&1 | FileCheck %s --check-prefix=MESH-EMPTY-AXIS
// MESH-EMPTY-AXIS: piper-gen: error: bad mesh axis '' in --mesh=dp=4,; expected NAME=SIZE[,NAME=SIZE...], e.g. --mesh=dp=4,pp=2,ep=2

// RUN: not piper-gen --config=tiny-gpt --mesh=dp=0 2>&1 | FileCheck %s --check-prefix=MESH-SIZE
// MESH-SIZE: piper-gen: error: mesh axis 'dp' has size '0' in --mesh=dp=0; sizes are integers from 1 to 1048576

// RUN: not piper-gen --config=tiny-gpt --mesh=dp=two 2>&1 | FileCheck %s --check-prefix=MESH-NAN
// MESH-NAN: piper-gen: error: mesh axis 'dp' has size 'two' in --mesh=dp=two; sizes are integers from 1 to 1048576

// RUN: not piper-gen --config=tiny-gpt --mesh=2d=2 2>&1 | FileCheck %s --check-prefix=MESH-NAME
// MESH-NAME: piper-gen: error: bad mesh axis name '2d' in --mesh=2d=2; names are letters, digits and '_', not starting with a digit

// RUN: not piper-gen --config=tiny-gpt --mesh=dp=2,dp=2 2>&1 | FileCheck %s --check-prefix=MESH-TWICE
// MESH-TWICE: piper-gen: error: mesh axis 'dp' appears twice in --mesh=dp=2,dp=2

// RUN: not piper-gen --config=tiny-gpt --mesh= 2>&1 | FileCheck %s --check-prefix=MESH-EMPTY
// MESH-EMPTY: piper-gen: error: --mesh is empty; expected NAME=SIZE[,NAME=SIZE...], e.g. --mesh=dp=4,pp=2,ep=2

// RUN: not piper-gen --config=tiny-gpt --zero=1 2>&1 | FileCheck %s --check-prefix=ZERO-MESH
// ZERO-MESH: piper-gen: error: --zero=1 needs --mesh: ZeRO shards over the mesh's 'dp' axis

// RUN: not piper-gen --config=tiny-moe --mesh=ep=2 --zero=2 2>&1 | FileCheck %s --check-prefix=ZERO-DP
// ZERO-DP: piper-gen: error: --zero=2 needs a 'dp' axis in --mesh to shard over

// RUN: not piper-gen --config=tiny-gpt --mesh=dp=2 --zero=4 2>&1 | FileCheck %s --check-prefix=ZERO-RANGE
// ZERO-RANGE: piper-gen: error: --zero must be 0, 1, 2 or 3, got 4

// Divisibility of parameter dims by mesh axes is the verifier's check; the
// tool passes its message on, naming the parameter, and prints no IR.
// RUN: not piper-gen --config=tiny-moe --mesh=dp=2,ep=3 > %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=EP-DIV < %t.err
// RUN: count 0 < %t.out
// EP-DIV: piper-gen: error: parameter 'layers.0.mlp.experts.w_gate' (argument #8): axis 'ep' of @mesh has size 3; dim 0 (size 4) is not divisible by it
// EP-DIV-NOT: {{.}}

// Unknown flags and malformed numbers are rejected by the option parser.
// RUN: not piper-gen --config=tiny-gpt --layer=3 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: piper-gen: Unknown command line argument '--layer=3'.
// RUN: not piper-gen --config=tiny-gpt --layers=three 2>&1 | FileCheck %s --check-prefix=NUMBER
// NUMBER: piper-gen: for the --layers option: 'three' value invalid for {{.*}} argument!

// RUN: not piper-gen --config=tiny-gpt -o %t.missing/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: piper-gen: error: cannot open output file '{{.*}}out.mlir': {{.*}}

// RUN: not piper-gen --config=tiny-mlp --tie-embeddings 2>&1 | FileCheck %s --check-prefix=TIE
// TIE: piper-gen: error: --tie-embeddings needs --model=gpt or moe: the mlp has no embedding table to share with its head

// Key/value heads divide the query heads.
// RUN: not piper-gen --config=tiny-gpt --kv-heads=3 2>&1 | FileCheck %s --check-prefix=KV
// KV: piper-gen: error: --kv-heads=3 must be >= 1 and divide --heads=2

// The rotary embedding pairs the halves of a head.
// RUN: not piper-gen --config=tiny-gpt --heads=16 --rope-theta=10000 2>&1 | FileCheck %s --check-prefix=ROPE
// ROPE: piper-gen: error: --rope-theta needs an even head dim, got 1 (--hidden / --heads)

// RUN: not piper-gen --config=tiny-gpt --rope-theta=-1 2>&1 | FileCheck %s --check-prefix=THETA
// THETA: piper-gen: error: --rope-theta must be >= 0 (0: no rotary embedding), got -1

// RUN: not piper-gen --config=tiny-mlp --qk-norm 2>&1 | FileCheck %s --check-prefix=MLPQK
// MLPQK: piper-gen: error: --kv-heads, --qk-norm and --rope-theta need --model=gpt or moe: the mlp has no attention
