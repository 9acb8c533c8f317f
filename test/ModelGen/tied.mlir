// --tie-embeddings: no lm_head.weight; the head is the transposed embedding
// table, read in the last pipeline stage as well as in the first.
// RUN: piper-gen --config=tiny-gpt --pp=2 --tie-embeddings | FileCheck %s
// RUN: piper-gen --config=tiny-moe --tie-embeddings | FileCheck %s --check-prefix=MOE

// CHECK-LABEL: func.func @step(%embed.weight: tensor<32x16xf32>
// CHECK-NOT: lm_head.weight
// CHECK: piper.annotate {PP = 0}
// CHECK: piper.embedding %embed.weight
// CHECK: piper.annotate {PP = 1}
// CHECK: %lm_head.tied = piper.transpose %embed.weight permutation = [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
// CHECK: piper.linear %{{.*}}, %lm_head.tied

// MOE-NOT: lm_head.weight
// MOE: piper.transpose %embed.weight permutation = [1, 0]
