// RUN: piper-opt %s -split-input-file --piper-autodiff | FileCheck %s
// Reverse-mode autodiff: gradients appended to the results, backward chunks
// split into BI (input gradients) and BW (weight gradients).

// A two-stage MLP. Each stage's backward is a BI chunk and a BW chunk with
// the stage's tags; saved activations are yielded by the forward chunks.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %[[W1:.*]]: tensor<8x16xf64> {piper.param = #piper.param<"w1", normal(0.1)>}
// CHECK-SAME:    %[[W2:.*]]: tensor<16x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>}
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf64>, %[[L:.*]]: tensor<2xi64>)
// CHECK-SAME:    -> (tensor<f64>, tensor<8x16xf64> {piper.grad = "w1"}, tensor<16x4xf64> {piper.grad = "w2"})
// CHECK:         %[[F0:.*]]:2 = piper.annotate {PP = 0} -> tensor<2x16xf64>, tensor<2x16xf64> {
// CHECK:           %[[A:.*]] = piper.linear %[[X]], %[[W1]]
// CHECK:           %[[R:.*]] = piper.relu %[[A]]
// CHECK:           piper.yield %[[R]], %[[A]]
// CHECK:         %[[F1:.*]]:2 = piper.annotate {PP = 1} -> tensor<f64>, tensor<2x4xf64> {
// CHECK:           %[[O:.*]] = piper.linear %[[F0]]#0, %[[W2]]
// CHECK:           %[[LOSS:.*]] = piper.cross_entropy %[[O]], %[[L]]
// CHECK:           piper.yield %[[LOSS]], %[[O]]
// CHECK:         %[[ONE:.*]] = arith.constant {piper.pass = #piper<pass BI>} dense<1.000000e+00> : tensor<f64>
// CHECK:         %[[B1I:.*]]:2 = piper.annotate {PP = 1} pass = BI
// CHECK:           %[[DO:.*]] = piper.vjp "piper.cross_entropy" wrt [0] (%[[F1]]#1, %[[L]]) cotangents (%[[ONE]])
// CHECK:           %[[DH:.*]] = piper.vjp "piper.linear" wrt [0] (%[[F0]]#0, %[[W2]]) cotangents (%[[DO]])
// CHECK:           piper.yield %[[DO]], %[[DH]]
// CHECK:         %[[B1W:.*]] = piper.annotate {PP = 1} pass = BW
// CHECK:           %[[DW2:.*]] = piper.vjp "piper.linear" wrt [1] (%[[F0]]#0, %[[W2]]) cotangents (%[[B1I]]#0)
// CHECK:           piper.yield %[[DW2]]
// CHECK:         %[[B0I:.*]] = piper.annotate {PP = 0} pass = BI
// CHECK:           %[[DA:.*]] = piper.vjp "piper.relu" wrt [0] (%[[F0]]#1) cotangents (%[[B1I]]#1)
// CHECK:         %[[B0W:.*]] = piper.annotate {PP = 0} pass = BW
// CHECK:           %[[DW1:.*]] = piper.vjp "piper.linear" wrt [1] (%[[X]], %[[W1]]) cotangents (%[[B0I]])
// CHECK:         return %[[F1]]#0, %[[B0W]], %[[B1W]]
func.func @mlp(%w1: tensor<8x16xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %w2: tensor<16x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x16xf64> {
    %a = piper.linear %x, %w1 : tensor<2x8xf64>, tensor<8x16xf64> -> tensor<2x16xf64>
    %r = piper.relu %a : tensor<2x16xf64>
    piper.yield %r : tensor<2x16xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<2x16xf64>, tensor<16x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

// -----

// Nested chunks: the EP chunks' backward nests inside the PP chunk's, with
// the same split at both levels. A value used by both experts gets the sum
// of their cotangents.
// CHECK-LABEL: func.func @experts(
// CHECK:         piper.annotate {PP = 0} pass = BI
// CHECK:           piper.vjp "piper.cross_entropy" wrt [0]
// CHECK:           %[[D1:.*]] = piper.annotate {EP = 1} pass = BI
// CHECK:             piper.vjp "piper.linear" wrt [0]
// CHECK:           %[[D0:.*]] = piper.annotate {EP = 0} pass = BI
// CHECK:             piper.vjp "piper.linear" wrt [0]
// CHECK:           piper.add %[[D1]], %[[D0]]
// CHECK:         piper.annotate {PP = 0} pass = BW
// CHECK:           piper.annotate {EP = 1} pass = BW
// CHECK:             piper.vjp "piper.linear" wrt [1]
// CHECK:           piper.annotate {EP = 0} pass = BW
// CHECK:             piper.vjp "piper.linear" wrt [1]
// CHECK:           piper.vjp "piper.linear" wrt [1]
// CHECK-NOT:     pass = BI
// CHECK:         return
func.func @experts(%w: tensor<4x4xf64> {piper.param = #piper.param<"w", normal(0.1)>},
                   %e0: tensor<4x4xf64> {piper.param = #piper.param<"e0", normal(0.1)>},
                   %e1: tensor<4x4xf64> {piper.param = #piper.param<"e1", normal(0.1)>},
                   %x: tensor<2x4xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %loss = piper.annotate {PP = 0} -> tensor<f64> {
    %h = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %y0 = piper.annotate {EP = 0} -> tensor<2x4xf64> {
      %o = piper.linear %h, %e0 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
      piper.yield %o : tensor<2x4xf64>
    }
    %y1 = piper.annotate {EP = 1} -> tensor<2x4xf64> {
      %o = piper.linear %h, %e1 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
      piper.yield %o : tensor<2x4xf64>
    }
    %s = piper.add %y0, %y1 : tensor<2x4xf64>
    %l = piper.cross_entropy %s, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

// -----

// Linear ops differentiate into piper ops: mul into mul, sub into sub from
// zero, reshape and transpose into their inverses. Parameter gradients used
// twice are summed; an unused parameter gets zeros. No chunks, no regions.
// CHECK-LABEL: func.func @linear_rules(
// CHECK-SAME:    %[[P:[^:]*]]: tensor<2x3xf64>
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<2x3xf64>
// CHECK-SAME:    %[[U:[^:]*]]: tensor<5xf64>
// CHECK-NOT:     piper.annotate
// Outside any chunk, derived ops carry their pass as `piper.pass`: the seed
// of the data-dependent loss is BI; everything only the parameters need is BW.
// CHECK:         %[[ONE:.*]] = arith.constant {piper.pass = #piper<pass BI>} dense<1.000000e+00> : tensor<f64>
// CHECK:         %[[DL:.*]] = piper.vjp "piper.cross_entropy" wrt [0] (%{{.*}}) cotangents (%[[ONE]]) {piper.pass = #piper<pass BW>}
// CHECK:         %[[DR:.*]] = piper.reshape %[[DL]] {piper.pass = #piper<pass BW>} : tensor<1x6xf64> -> tensor<6xf64>
// CHECK:         %[[DT:.*]] = piper.reshape %[[DR]] {{.*}} : tensor<6xf64> -> tensor<3x2xf64>
// CHECK:         %[[DS:.*]] = piper.transpose %[[DT]] permutation = [1, 0] {{.*}} : tensor<3x2xf64> -> tensor<2x3xf64>
// CHECK:         %[[ZERO:.*]] = arith.constant {{.*}}dense<0.000000e+00> : tensor<2x3xf64>
// CHECK:         %[[NEG:.*]] = piper.sub %[[ZERO]], %[[DS]]
// CHECK:         %[[MQ:.*]] = piper.mul %[[DS]], %[[Q]]
// CHECK:         %[[MP:.*]] = piper.mul %[[DS]], %[[P]]
// CHECK:         %[[DP:.*]] = piper.add %[[DS]], %[[MQ]]
// CHECK:         %[[DQ:.*]] = piper.add %[[NEG]], %[[MP]]
// CHECK:         %[[DU:.*]] = arith.constant {{.*}}dense<0.000000e+00> : tensor<5xf64>
// CHECK:         return %{{.*}}, %[[DP]], %[[DQ]], %[[DU]]
func.func @linear_rules(%p: tensor<2x3xf64> {piper.param = #piper.param<"p", normal(0.1)>},
                        %q: tensor<2x3xf64> {piper.param = #piper.param<"q", normal(0.1)>},
                        %u: tensor<5xf64> {piper.param = #piper.param<"unused", zeros>},
                        %labels: tensor<1xi64>) -> tensor<f64> {
  %m = piper.mul %p, %q : tensor<2x3xf64>
  %d = piper.sub %p, %q : tensor<2x3xf64>
  %s = piper.add %m, %d : tensor<2x3xf64>
  %t = piper.transpose %s permutation = [1, 0] : tensor<2x3xf64> -> tensor<3x2xf64>
  %r = piper.reshape %t : tensor<3x2xf64> -> tensor<6xf64>
  %r2 = piper.reshape %r : tensor<6xf64> -> tensor<1x6xf64>
  %l = piper.cross_entropy %r2, %labels : tensor<1x6xf64>, tensor<1xi64> -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// Sums of cotangents stay in chunks: the contributions one chunk's
// backward makes to a value from another chunk are summed inside it (a
// stage input read twice sends one gradient back, not two), and a weight
// used twice in one chunk is summed inside its BW.
// CHECK-LABEL: func.func @sums_stay_in_chunks(
// CHECK:         piper.annotate {PP = 1} pass = BI
// CHECK:           piper.add
// CHECK:           piper.yield
// CHECK:         piper.annotate {PP = 0} pass = BI
// CHECK-NOT:       piper.add
// CHECK:         piper.annotate {PP = 0} pass = BW
// CHECK:           piper.vjp "piper.linear" wrt [1]
// CHECK:           piper.vjp "piper.linear" wrt [1]
// CHECK:           piper.add
// CHECK:           piper.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @sums_stay_in_chunks(%w: tensor<4x4xf64> {piper.param = #piper.param<"w", normal(0.1)>},
                               %x: tensor<2x4xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %a = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %b = piper.linear %a, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    piper.yield %b : tensor<2x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %m = piper.mul %h, %h : tensor<2x4xf64>
    %l = piper.cross_entropy %m, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

// -----

// An op with an ElementwiseOpInterface and no registered VJP rule
// (piper.sigmoid) differentiates into one piper.vjp of itself.
// CHECK-LABEL: func.func @sigmoid_has_a_generic_vjp(
// CHECK:         %[[A:.*]] = piper.linear
// CHECK:         %[[S:.*]] = piper.sigmoid %[[A]] : tensor<2x4xf64>
// CHECK:         piper.vjp "piper.cross_entropy"
// CHECK:         %[[DO:.*]] = piper.vjp "piper.linear" wrt [0]
// CHECK:         %[[DA:.*]] = piper.vjp "piper.sigmoid" wrt [0] (%[[A]]) cotangents (%[[DO]]) {piper.pass = #piper<pass BI>} : (tensor<2x4xf64>), (tensor<2x4xf64>) -> tensor<2x4xf64>
// CHECK:         piper.vjp "piper.linear" wrt [1]
func.func @sigmoid_has_a_generic_vjp(
    %w1: tensor<3x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
    %w2: tensor<4x2xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
    %x: tensor<2x3xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %a = piper.linear %x, %w1 : tensor<2x3xf64>, tensor<3x4xf64> -> tensor<2x4xf64>
  %s = piper.sigmoid %a : tensor<2x4xf64>
  %o = piper.linear %s, %w2 : tensor<2x4xf64>, tensor<4x2xf64> -> tensor<2x2xf64>
  %l = piper.cross_entropy %o, %labels : tensor<2x2xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
