// scripts/make-corpus builds the fixed train / held-out split of the
// fortunes corpus: the same bytes on every machine with Debian 12's
// `fortunes` 1:1.99.1-7.3 (every 20th fortune held out), and the unigram
// baseline a language model's held-out loss must beat. A byte-level model
// trains on it through --data.
// REQUIRES: fortunes
// RUN: rm -rf %t && mkdir -p %t
// RUN: %piper_src_root/scripts/make-corpus %t/corpus | FileCheck %s
// RUN: head -c 4096 %t/corpus/train.txt > %t/small.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --dtype=f64 -o %t/lm.mlir
// RUN: piper-interp %t/lm.mlir --steps=2 --optimizer=adamw --data=%t/small.txt | FileCheck %s --check-prefix=TRAIN

// CHECK: make-corpus: 14269 fortunes -> {{.*}}/train.txt (2272327 bytes), {{.*}}/heldout.txt (121813 bytes)
// CHECK: make-corpus: unigram baseline on held-out: 3.2940 nats/byte (4.752 bits/byte)

// TRAIN: step 1 loss 5.5{{[0-9]+}}
// TRAIN: step 2 loss
