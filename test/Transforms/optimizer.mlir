// RUN: piper-opt %s -split-input-file --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1 momentum=0.9" | FileCheck %s --check-prefix=SGD
// RUN: piper-opt %s -split-input-file --piper-autodiff --piper-optimizer="optimizer=adamw lr=0.001 weight-decay=0.01" | FileCheck %s --check-prefix=ADAMW
// Gradients become updates in UPD chunks tagged like the chunk using the
// parameter; optimizer state is threaded through arguments and results.

// SGD-LABEL: func.func @two_stages(
// SGD-SAME:    %[[W1:[^:]*]]: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>}
// SGD-SAME:    %[[W2:[^:]*]]: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>}
// SGD-SAME:    %[[B1:[^:]*]]: tensor<8x4xf64> {piper.state = #piper.state<"w1", "momentum_buffer">}
// SGD-SAME:    %[[B2:[^:]*]]: tensor<4x4xf64> {piper.state = #piper.state<"w2", "momentum_buffer">})
// SGD-SAME:    -> (tensor<f64>, tensor<8x4xf64> {piper.updated = "w1"}, tensor<8x4xf64> {piper.state = #piper.state<"w1", "momentum_buffer">},
// SGD-SAME:        tensor<4x4xf64> {piper.updated = "w2"}, tensor<4x4xf64> {piper.state = #piper.state<"w2", "momentum_buffer">})
// SGD:         %[[G1:.*]] = piper.annotate {PP = 0} pass = BW
// SGD:         %[[U0:.*]]:2 = piper.annotate {PP = 0} pass = UPD
// SGD-NEXT:      %[[P:.*]], %[[B:.*]] = piper.sgd_update %[[W1]], %[[G1]], %[[B1]] {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64} : tensor<8x4xf64>
// SGD-NEXT:      piper.yield %[[P]], %[[B]]
// SGD:         %[[U1:.*]]:2 = piper.annotate {PP = 1} pass = UPD
// SGD-NEXT:      piper.sgd_update %[[W2]], %{{.*}}, %[[B2]]
// SGD:         return %{{.*}}, %[[U0]]#0, %[[U0]]#1, %[[U1]]#0, %[[U1]]#1

// ADAMW-LABEL: func.func @two_stages(
// ADAMW-SAME:    %[[M1:[^:]*]]: tensor<8x4xf64> {piper.state = #piper.state<"w1", "exp_avg">}
// ADAMW-SAME:    %[[V1:[^:]*]]: tensor<8x4xf64> {piper.state = #piper.state<"w1", "exp_avg_sq">}
// ADAMW-SAME:    %[[S1:[^:]*]]: tensor<i64> {piper.state = #piper.state<"w1", "step">}
// ADAMW:         piper.annotate {PP = 0} pass = UPD
// ADAMW:           %[[ONE:.*]] = arith.constant dense<1> : tensor<i64>
// ADAMW:           %[[T:.*]] = arith.addi %[[S1]], %[[ONE]] : tensor<i64>
// ADAMW:           piper.adamw_update %{{.*}}, %{{.*}}, %[[M1]], %[[V1]], %[[T]] {lr = 1.000000e-03 : f64} : tensor<8x4xf64>
// ADAMW:         piper.annotate {PP = 1} pass = UPD
// ADAMW:           piper.adamw_update
func.func @two_stages(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
                      %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
                      %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %a = piper.linear %x, %w1 : tensor<2x8xf64>, tensor<8x4xf64> -> tensor<2x4xf64>
    piper.yield %a : tensor<2x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

// -----

// Expert weights update inside their expert chunk; a weight used by two
// stages (tied) updates outside any chunk.
// SGD-LABEL: func.func @nested(
// SGD:         %[[TIED:.*]], %[[TIEDBUF:.*]] = piper.sgd_update %arg0
// SGD-NEXT:    %[[U:.*]]:4 = piper.annotate {PP = 0} pass = UPD
// SGD-NEXT:      piper.annotate {EP = 0} pass = UPD
// SGD-NEXT:        piper.sgd_update %arg1
// SGD:           piper.annotate {EP = 1} pass = UPD
// SGD-NEXT:        piper.sgd_update %arg2
// SGD-NOT:     pass = UPD
// SGD:         return %{{.*}}, %[[TIED]], %[[TIEDBUF]], %[[U]]#0
func.func @nested(%tied: tensor<4x4xf64> {piper.param = #piper.param<"tied", normal(0.1)>},
                  %e0: tensor<4x4xf64> {piper.param = #piper.param<"e0", normal(0.1)>},
                  %e1: tensor<4x4xf64> {piper.param = #piper.param<"e1", normal(0.1)>},
                  %x: tensor<2x4xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %t = piper.linear %x, %tied : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %y0 = piper.annotate {EP = 0} -> tensor<2x4xf64> {
      %o = piper.linear %t, %e0 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
      piper.yield %o : tensor<2x4xf64>
    }
    %y1 = piper.annotate {EP = 1} -> tensor<2x4xf64> {
      %o = piper.linear %t, %e1 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
      piper.yield %o : tensor<2x4xf64>
    }
    %s = piper.add %y0, %y1 : tensor<2x4xf64>
    piper.yield %s : tensor<2x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %tied : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}
