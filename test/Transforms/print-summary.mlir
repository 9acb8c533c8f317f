// RUN: piper-opt %s --piper-print-summary -o /dev/null | FileCheck %s
// RUN: piper-opt %s --piper-print-summary | FileCheck %s --check-prefix=UNCHANGED
// The summary lists meshes, placements with per-device storage, and chunks.

// CHECK-LABEL: mesh @cluster: 16 devices
// CHECK-NEXT:    axis dp: size 4, efa, 50 GB/s, 10 us
// CHECK-NEXT:    axis pp: size 2, nvlink, 450 GB/s
// CHECK-NEXT:    axis tp: size 2, nvlink
// CHECK-NEXT:    axis xp: size 1
// CHECK-LABEL: mesh @single: 1 device
// CHECK-NEXT:    axis "data parallel": size 1
piper.mesh @cluster axes = [dp = 4 : efa(bandwidth = 50, latency = 10),
                            pp = 2 : nvlink(bandwidth = 450), tp = 2 : nvlink,
                            xp = 1]
piper.mesh @single axes = ["data parallel" = 1]

// CHECK-LABEL: function @step
// Column-parallel weight: 64x256 f32 split over tp=2 is 64x128 = 32768 B.
// CHECK-NEXT:    param "w" normal(0.02) (arg 0) tensor<64x256xf32> #piper.placement<@cluster, [{}, {tp}], replicated = {dp}, zero = 1>
// CHECK-NEXT:      per device: tensor<64x128xf32>, 32768 bytes; ZeRO-1 shards optimizer state 1/4{{$}}
// CHECK-NEXT:    param "x" ones (arg 1) tensor<4x64xf32> #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 2>
// CHECK-NEXT:      per device: tensor<4x64xf32>, 1024 bytes; ZeRO-2 shards gradients and optimizer state 1/4{{$}}
// ZeRO-3 over dp=4 keeps a quarter of the 2048 B shard.
// CHECK-NEXT:    param "v" zeros (arg 2) tensor<32x32xf16> #piper.placement<@cluster, [{tp}, {}], replicated = {dp}, zero = 3>
// CHECK-NEXT:      per device: tensor<16x32xf16>, 1024 bytes; ZeRO-3 shards parameters, gradients and optimizer state 1/4 (keeps 256 bytes)
// CHECK-NEXT:    result 0 tensor<4x256xf32> #piper.placement<@cluster, [{}, {}]>
// CHECK-NEXT:      per device: tensor<4x256xf32>, 4096 bytes{{$}}
// CHECK-NEXT:    chunk {PP = 0}: 1 op, 2 nested chunks
// CHECK-NEXT:      chunk {PP = 0, EP = 0}: 2 ops
// CHECK-NEXT:      chunk {PP = 0, EP = 1}: 0 ops
// CHECK-NEXT:    chunk {PP = 1}: 1 op
// CHECK-NOT:     chunk
// CHECK-LABEL: function @empty
// CHECK-NOT:   {{.}}
func.func @step(
    %w: tensor<64x256xf32> {piper.param = #piper.param<"w", normal(0.02), placement = #piper.placement<@cluster, [{}, {tp}], replicated = {dp}, zero = 1>>},
    %x: tensor<4x64xf32> {piper.param = #piper.param<"x", ones, placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 2>>},
    %v: tensor<32x32xf16> {piper.param = #piper.param<"v", zeros, placement = #piper.placement<@cluster, [{tp}, {}], replicated = {dp}, zero = 3>>})
    -> (tensor<4x256xf32> {piper.placement = #piper.placement<@cluster, [{}, {}]>}) {
  %h = piper.annotate {PP = 0} -> tensor<4x256xf32> {
    %e = tensor.empty() : tensor<4x256xf32>
    %a = piper.annotate {EP = 0} -> tensor<4x256xf32> {
      %z = arith.constant 0.0 : f32
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x256xf32>) -> tensor<4x256xf32>
      piper.yield %f : tensor<4x256xf32>
    }
    piper.annotate {EP = 1} {
      piper.yield
    }
    piper.yield %a : tensor<4x256xf32>
  }
  %o = piper.annotate {PP = 1} -> tensor<4x256xf32> {
    %s = arith.addf %h, %h : tensor<4x256xf32>
    piper.yield %s : tensor<4x256xf32>
  }
  return %o : tensor<4x256xf32>
}

func.func @empty() {
  return
}

// The pass does not change the module.
// UNCHANGED: piper.mesh @cluster
// UNCHANGED: func.func @step
// UNCHANGED: piper.annotate {PP = 1}

// -----
// Parameters print their name, initialiser and storage.
// CHECK-LABEL: function @params
// CHECK-NEXT:    param "embed" normal(0.02) (arg 0) tensor<16x8xf32>, replicated
// CHECK-NEXT:    param "proj" zeros (arg 1) tensor<8x8xf32> #piper.placement<@cluster, [{}, {tp}], replicated = {dp}, zero = 3>
// CHECK-NEXT:      per device: tensor<8x4xf32>, 128 bytes; ZeRO-3 shards parameters, gradients and optimizer state 1/4 (keeps 32 bytes)
// CHECK-NEXT:    arg 2 tensor<4x8xf32> #piper.placement<@cluster, [{dp}, {}]>
func.func private @params(
    tensor<16x8xf32> {piper.param = #piper.param<"embed", normal(0.02)>},
    tensor<8x8xf32> {piper.param = #piper.param<"proj", zeros, placement = #piper.placement<@cluster, [{}, {tp}], replicated = {dp}, zero = 3>>},
    tensor<4x8xf32> {piper.placement = #piper.placement<@cluster, [{dp}, {}]>})
