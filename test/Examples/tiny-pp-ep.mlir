// RUN: piper-opt %piper_src_root/examples/models/tiny_pp_ep.mlir --piper-print-summary -o /dev/null | FileCheck %s --check-prefix=SUMMARY
// RUN: piper-opt %piper_src_root/examples/models/tiny_pp_ep.mlir --piper-autodiff --piper-optimizer="optimizer=adamw lr=0.01" | FileCheck %s --check-prefix=STEP
// The example that scripts/quickstart runs stays valid, and differentiates
// into BI/BW chunks per stage and expert and UPD chunks per stage.

// SUMMARY:      mesh @cluster: 8 devices
// SUMMARY:      param "stage1.expert0" normal(0.02) (arg 1) tensor<32x32xf32>
// SUMMARY-NEXT:   per device: tensor<32x32xf32>, 4096 bytes; ZeRO-3 shards parameters, gradients and optimizer state 1/2 (keeps 2048 bytes)
// SUMMARY:      chunk {PP = 1}: 3 ops, 2 nested chunks
// SUMMARY-NEXT:   chunk {PP = 1, EP = 0}: 2 ops
// SUMMARY-NEXT:   chunk {PP = 1, EP = 1}: 2 ops

// STEP: piper.annotate {PP = 1} pass = BI
// STEP:   piper.annotate {EP = 1} pass = BI
// STEP:   piper.annotate {EP = 0} pass = BI
// STEP: piper.annotate {PP = 1} pass = BW
// STEP: piper.annotate {PP = 0} pass = BI
// STEP: piper.annotate {PP = 0} pass = BW
// STEP: piper.annotate {PP = 0} pass = UPD
// STEP:   piper.adamw_update
// STEP: piper.annotate {PP = 1} pass = UPD
// STEP:   piper.annotate {EP = 0} pass = UPD
// STEP:   piper.annotate {EP = 1} pass = UPD
