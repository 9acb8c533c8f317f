// RUN: piper-gen --list-configs | FileCheck %s
// RUN: piper-gen --help | FileCheck %s --check-prefix=HELP
// The named configs with their sizes, key/value heads, MoE capacity (with
// its factor, or T where no token is dropped), Qwen3's attention features
// and parameter count.

// CHECK:      config    model layers hidden heads  kv   ffn experts top-k   vocab   seq batch   in capacity     attention              params
// CHECK-NEXT: tiny-mlp  mlp        2     32     -   -     -       -     -       8     -     4   16 -            -                        1864
// CHECK-NEXT: tiny-gpt  gpt        2     16     2   2    32       -     -      32     8     2    - -            -                        6224
// CHECK-NEXT: tiny-moe  moe        2     16     2   2    16       4     2      32     8     2    - 16 (T)       -                        9424
// CHECK-NEXT: qwen3_1b  moe       16   1024     8   4  3584       4     2  151936   512     1    - 256 (f=1)    qk-norm,rope=1e+06 1066243072
// CHECK-NEXT: qwen3_9b  moe       24   2048    16   4  7168       8     2  151936  2048     1    - 512 (f=1)    qk-norm,rope=1e+06 9330204672
// CHECK-NEXT: deepseek_v3 moe       61   7168   128 128  2048     256     8  129280  4096     1    - 128 (f=1)    -                  702234588160
// CHECK-NOT:  {{.}}

// HELP:      OVERVIEW: piper-gen: emits the forward training step
// HELP:      Size overrides (each replaces the config's value):
// HELP:        --capacity-factor=<F>
// HELP:        --top-k=<N>
// HELP:      piper-gen options:
// HELP:        --config=<name>
// HELP:        --list-configs
// HELP:        --mesh=<name=size,...>
// HELP:        --model=<mlp|gpt|moe>
// HELP:        --pp=<N>
// HELP:        --zero=<Z>
