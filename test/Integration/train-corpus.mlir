// Training on text: --data feeds the bytes of Piper's bundled corpus
// (data/corpus/sonnets.txt, 3173 bytes) as tokens to a GPT with vocabulary
// 256, in the fixed global order of ByteCorpus.h, to piper-interp and to
// piper-run alike: a serial plan in one process and a ZeRO-1 DP2 plan under
// mpiexec (each replica reading its rows of the global batch) print the
// interpreter's losses and end with its parameters. The model learns the
// text: after 8 AdamW steps at lr 0.01 the loss has fallen from ln 256.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=8 --optimizer=adamw --lr=0.01 --data=%piper_src_root/data/corpus/sonnets.txt --params-out=%t/gpt.params > %t/gpt.txt
// RUN: FileCheck %s --input-file=%t/gpt.txt
// RUN: python3 -c "import sys; l=[float(x.split()[3]) for x in open(sys.argv[1])]; sys.exit(0 if l[0] > 5.5 and l[-1] < l[0] - 0.5 else 1)" %t/gpt.txt
//
// Serial plan, one process.
// RUN: piper-compile %t/gpt.mlir --lr=0.01 -o %t/serial.plan
// RUN: piper-run %t/serial.plan --steps=8 --data=%piper_src_root/data/corpus/sonnets.txt --params-out=%t/serial.params > %t/serial.txt
// RUN: %numdiff %t/gpt.txt %t/serial.txt && %numdiff %t/gpt.params %t/serial.params
//
// Errors: a vocabulary too small for bytes, a model without token data, a
// missing file.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 -o %t/v32.mlir
// RUN: not piper-interp %t/v32.mlir --data=%piper_src_root/data/corpus/sonnets.txt 2>&1 | FileCheck %s --check-prefix=VOCAB
// RUN: piper-compile %t/v32.mlir -o %t/v32.plan
// RUN: not piper-run %t/v32.plan --data=%piper_src_root/data/corpus/sonnets.txt 2>&1 | FileCheck %s --check-prefix=VOCAB2
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: not piper-interp %t/mlp.mlir --data=%piper_src_root/data/corpus/sonnets.txt 2>&1 | FileCheck %s --check-prefix=MLP
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.plan
// RUN: not piper-run %t/mlp.plan --data=%piper_src_root/data/corpus/sonnets.txt 2>&1 | FileCheck %s --check-prefix=MLP2
// RUN: not piper-run %t/serial.plan --data=%t/missing.txt 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: step 1 loss 5.5
// CHECK: step 8 loss

// VOCAB: error: piper-interp: argument #21: the corpus's tokens are bytes (0-255), but the model's vocabulary has 32 ids (generate it with --vocab=256)
// VOCAB2: piper-run: the corpus's tokens are bytes (0-255), but the model's vocabulary has 32 ids (generate it with --vocab=256)
// MLP: error: piper-interp: --data needs a language model whose data are two integer arguments of one size (token ids, then labels); @step has 2 data arguments of other kinds or sizes
// MLP2: piper-run: --data needs a language model whose data are two integer arguments of one size (token ids, then labels); the plan has 2 data arguments of other kinds or sizes
// MISSING: piper-run: cannot read the corpus '{{.*}}missing.txt'
