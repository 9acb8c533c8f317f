// A tiny two-stage model with expert parallelism, annotated for Piper.
//
// 8 devices: 2 data-parallel replicas across nodes (EFA), and inside each
// node 2 pipeline stages x 2 expert-parallel ranks over NVLink. Stage 0 is a
// dense layer; stage 1 holds two experts (each an EP chunk), sums them and
// computes the loss. Parameters carry names, initialisers and placements;
// the batch (8 rows) is split over dp.

piper.mesh @cluster axes = [dp = 2 : efa(bandwidth = 50, latency = 10),
                            pp = 2 : nvlink(bandwidth = 450, latency = 1),
                            ep = 2 : nvlink(bandwidth = 450, latency = 1)]

func.func @train_step(
    // Dense weight, ZeRO-1: optimizer state sharded over dp.
    %w_in: tensor<16x32xf32> {piper.param = #piper.param<"stage0.w_in", normal(0.02),
        placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 1>>},
    // One weight per expert; each lives on its ep rank, ZeRO-3 over dp.
    %w_e0: tensor<32x32xf32> {piper.param = #piper.param<"stage1.expert0", normal(0.02),
        placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 3>>},
    %w_e1: tensor<32x32xf32> {piper.param = #piper.param<"stage1.expert1", normal(0.02),
        placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 3>>},
    %w_out: tensor<32x8xf32> {piper.param = #piper.param<"stage1.w_out", normal(0.02),
        placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}>>},
    // Data: the global batch of 8 rows is split over dp.
    %x: tensor<8x16xf32> {piper.placement = #piper.placement<@cluster, [{dp}, {}]>},
    %labels: tensor<8xi64>) -> tensor<f32> {
  %h = piper.annotate {PP = 0} -> tensor<8x32xf32> {
    %a = piper.linear %x, %w_in : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
    %g = piper.gelu %a : tensor<8x32xf32>
    piper.yield %g : tensor<8x32xf32>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f32> {
    %e0 = piper.annotate {EP = 0} -> tensor<8x32xf32> {
      %o = piper.linear %h, %w_e0 : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
      %r = piper.silu %o : tensor<8x32xf32>
      piper.yield %r : tensor<8x32xf32>
    }
    %e1 = piper.annotate {EP = 1} -> tensor<8x32xf32> {
      %o = piper.linear %h, %w_e1 : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
      %r = piper.silu %o : tensor<8x32xf32>
      piper.yield %r : tensor<8x32xf32>
    }
    %sum = piper.add %e0, %e1 : tensor<8x32xf32>
    %logits = piper.linear %sum, %w_out : tensor<8x32xf32>, tensor<32x8xf32> -> tensor<8x8xf32>
    %l = piper.cross_entropy %logits, %labels : tensor<8x8xf32>, tensor<8xi64> -> tensor<f32>
    piper.yield %l : tensor<f32>
  }
  return %loss : tensor<f32>
}
