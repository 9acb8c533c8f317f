// A tiny two-stage model with expert parallelism, annotated for Piper.
//
// 8 devices: 2 data-parallel replicas across nodes (EFA), and inside each
// node 2 pipeline stages x 2 expert-parallel ranks over NVLink. Stage 0 is a
// dense layer; stage 1 holds two experts (each an EP chunk) and the output
// projection. The NN ops of Piper's model level are not in yet, so the
// bodies use upstream linalg/arith on tensors.

piper.mesh @cluster axes = [dp = 2 : efa(bandwidth = 50, latency = 10),
                            pp = 2 : nvlink(bandwidth = 450, latency = 1),
                            ep = 2 : nvlink(bandwidth = 450, latency = 1)]

func.func @train_step(
    // Dense weight, ZeRO-1: optimizer state sharded over dp.
    %w_in: tensor<16x32xf32> {piper.param = #piper.param<"stage0.w_in", normal(0.02),
        placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 1>>},
    // Expert weights [E, H, H]: one expert per ep rank, ZeRO-3 over dp.
    %w_exp: tensor<2x32x32xf32> {piper.param = #piper.param<"stage1.experts", normal(0.02),
        placement = #piper.placement<@cluster, [{ep}, {}, {}], replicated = {dp}, zero = 3>>},
    %w_out: tensor<32x8xf32> {piper.param = #piper.param<"stage1.w_out", zeros,
        placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}>>},
    // Activations: the global batch of 8 rows is split over dp.
    %x: tensor<8x16xf32> {piper.placement = #piper.placement<@cluster, [{dp}, {}]>})
    -> tensor<8x8xf32> {
  %h = piper.annotate {PP = 0} -> tensor<8x32xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<8x32xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
    %mm = linalg.matmul ins(%x, %w_in : tensor<8x16xf32>, tensor<16x32xf32>)
                        outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
    %act = math.tanh %mm : tensor<8x32xf32>
    piper.yield %act : tensor<8x32xf32>
  }
  %y = piper.annotate {PP = 1} -> tensor<8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<8x32xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
    %e0 = piper.annotate {EP = 0} -> tensor<8x32xf32> {
      %w = tensor.extract_slice %w_exp[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<2x32x32xf32> to tensor<32x32xf32>
      %o = linalg.matmul ins(%h, %w : tensor<8x32xf32>, tensor<32x32xf32>)
                         outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
      piper.yield %o : tensor<8x32xf32>
    }
    %e1 = piper.annotate {EP = 1} -> tensor<8x32xf32> {
      %w = tensor.extract_slice %w_exp[1, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<2x32x32xf32> to tensor<32x32xf32>
      %o = linalg.matmul ins(%h, %w : tensor<8x32xf32>, tensor<32x32xf32>)
                         outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
      piper.yield %o : tensor<8x32xf32>
    }
    %sum = arith.addf %e0, %e1 : tensor<8x32xf32>
    %init2 = tensor.empty() : tensor<8x8xf32>
    %acc2 = linalg.fill ins(%zero : f32) outs(%init2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %out = linalg.matmul ins(%sum, %w_out : tensor<8x32xf32>, tensor<32x8xf32>)
                         outs(%acc2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    piper.yield %out : tensor<8x8xf32>
  }
  return %y : tensor<8x8xf32>
}
