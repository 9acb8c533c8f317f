// piper-interp --sample=N continues --prompt by N bytes with the trained
// parameters (the reference forward up to the logits of the model's
// cross_entropy). A byte-level GPT trained on a text of period 5 ("abcde"
// repeated; windows start at every phase) continues any phase of it,
// greedily and at temperature 1 alike; draws are reproducible (--seed).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "print('abcde' * 640, end='')" > %t/abc.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=8 --dtype=f64 -o %t/lm.mlir
// RUN: piper-interp %t/lm.mlir --steps=80 --optimizer=adamw --lr=0.02 --data=%t/abc.txt --sample=24 --prompt=cd --temperature=0 | FileCheck %s --check-prefix=GREEDY
// RUN: piper-interp %t/lm.mlir --steps=80 --optimizer=adamw --lr=0.02 --data=%t/abc.txt --sample=13 --prompt=eab --temperature=1 --seed=3 > %t/t1.txt
// RUN: FileCheck %s --check-prefix=WARM --input-file=%t/t1.txt
// RUN: piper-interp %t/lm.mlir --steps=80 --optimizer=adamw --lr=0.02 --data=%t/abc.txt --sample=13 --prompt=eab --temperature=1 --seed=3 | diff - %t/t1.txt

// Errors: a model that is not a byte-level language model, flag ranges.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 -o %t/mlp.mlir
// RUN: not piper-interp %t/mlp.mlir --sample=3 2>&1 | FileCheck %s --check-prefix=MLP
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 -o %t/gpt32.mlir
// RUN: not piper-interp %t/gpt32.mlir --sample=3 2>&1 | FileCheck %s --check-prefix=VOCAB
// RUN: not piper-interp %t/lm.mlir --sample=-1 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not piper-interp %t/lm.mlir --sample=2 --temperature=-1 2>&1 | FileCheck %s --check-prefix=RANGE

// GREEDY: step 80 loss 0.000{{[0-9]+}}
// GREEDY-NEXT: sample (24 bytes, greedy):
// GREEDY-NEXT: {{^}}cdeabcdeabcdeabcdeabcdeabc{{$}}

// WARM: sample (13 bytes, temperature 1.00):
// WARM-NEXT: {{^}}eabcdeabcdeabcde{{$}}

// MLP: mlp.mlir:{{[0-9]+}}:{{[0-9]+}}: error: sampling needs token ids [B, S] and labels as arguments and static logits
// VOCAB: error: sampling needs byte logits [16, 256] (a model generated with --vocab=256), got 'tensor<16x32xf64>'
// RANGE: piper-interp: --sample must be in [0, 1000000] and --temperature finite and >= 0
