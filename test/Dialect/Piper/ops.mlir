// RUN: piper-opt %s | piper-opt | FileCheck %s
// RUN: piper-opt %s --mlir-print-op-generic | piper-opt | FileCheck %s
// Round trip of every piper op and attribute, in custom and generic form.

// A mesh with every link class and both link properties.
// CHECK-LABEL: piper.mesh @cluster axes = [
// CHECK-SAME:   dp = 4 : efa(bandwidth = 50, latency = 10),
// CHECK-SAME:   pp = 2 : nvlink(bandwidth = 450),
// CHECK-SAME:   ep = 2 : infiniband(latency = 1.5),
// CHECK-SAME:   tp = 2 : pcie, sp = 1 : roce, cp = 1 : ethernet, xp = 1]
piper.mesh @cluster axes = [dp = 4 : efa(bandwidth = 50, latency = 10),
                            pp = 2 : nvlink(bandwidth = 450.0),
                            ep = 2 : infiniband(latency = 1.5),
                            tp = 2 : pcie, sp = 1 : roce, cp = 1 : ethernet,
                            xp = 1]

// Quoted axis names survive; link numbers keep their exact value.
// CHECK-LABEL: piper.mesh @quoted axes = ["data parallel" = 8 : nvlink(bandwidth = 3000000000000)]
piper.mesh @quoted axes = ["data parallel" = 8 : nvlink(bandwidth = 3.0e12)]

// The axis attribute on its own.
// CHECK-LABEL: func.func private @axis_attr()
// CHECK-SAME:    axis = #piper.axis<dp = 4 : infiniband(bandwidth = 25, latency = 5)>
func.func private @axis_attr() attributes {
    axis = #piper.axis<dp = 4 : infiniband(bandwidth = 25.0, latency = 5.0)>}

// Placements on arguments and results; zero = 0 and an empty replicated
// list are not printed. ZeRO stages live on parameters.
// CHECK-LABEL: func.func private @placements(
// CHECK-SAME: tensor<16x8xf32> {piper.placement = #piper.placement<@cluster, [{tp}, {}], replicated = {dp}>}
// CHECK-SAME: tensor<16xf64> {piper.placement = #piper.placement<@cluster, [{ep, tp}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {piper.placement = #piper.placement<@cluster, [{}, {}]>})
func.func private @placements(
    tensor<16x8xf32> {piper.placement = #piper.placement<@cluster, [{tp}, {}], replicated = {dp}, zero = 0>},
    tensor<16xf64> {piper.placement = #piper.placement<@cluster, [{ep, tp}]>})
    -> (tensor<8x8xf32> {piper.placement = #piper.placement<@cluster, [{}, {}]>})

// Every ZeRO stage on parameters; fields may come in any order.
// CHECK-LABEL: func.func private @zero_stages(
// CHECK-SAME: placement = #piper.placement<@cluster, [{}, {tp}], replicated = {dp}, zero = 1>
// CHECK-SAME: placement = #piper.placement<@cluster, [{}, {}], replicated = {dp}, zero = 2>
// CHECK-SAME: placement = #piper.placement<@cluster, [{ep}, {tp}, {}], replicated = {dp}, zero = 3>
func.func private @zero_stages(
    tensor<16x8xf32> {piper.param = #piper.param<"a", zeros, placement = #piper.placement<@cluster, [{}, {tp}], replicated = {dp}, zero = 1>>},
    tensor<16x8xf32> {piper.param = #piper.param<"b", zeros, placement = #piper.placement<@cluster, [{}, {}], zero = 2, replicated = {dp}>>},
    tensor<4x16x8xbf16> {piper.param = #piper.param<"c", zeros, placement = #piper.placement<@cluster, [{ep}, {tp}, {}], replicated = {dp}, zero = 3>>})

// Dynamic dimensions are not checked for divisibility.
// CHECK-LABEL: func.func private @dynamic(
// CHECK-SAME: tensor<?x8xf32> {piper.placement = #piper.placement<@cluster, [{dp}, {}]>}
func.func private @dynamic(
    tensor<?x8xf32> {piper.placement = #piper.placement<@cluster, [{dp}, {}]>})

// Nested annotations with integer and string tags; the yielded values
// become the results.
// CHECK-LABEL: func.func @chunks(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>
// CHECK:         %[[OUTER:.*]]:2 = piper.annotate {PP = 0} -> tensor<4x8xf32>, tensor<4x8xf32> {
// CHECK:           %[[INNER:.*]] = piper.annotate {EP = 1, KIND = "ffn"} -> tensor<4x8xf32> {
// CHECK:             %[[SUM:.*]] = arith.addf %[[X]], %[[X]] : tensor<4x8xf32>
// CHECK:             piper.yield %[[SUM]] : tensor<4x8xf32>
// CHECK:           }
// CHECK:           piper.yield %[[INNER]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK:         }
// CHECK:         piper.annotate {STAGE = "loss"} {
// CHECK-NEXT:      piper.yield
// CHECK-NEXT:    }
// CHECK:         return %[[OUTER]]#0
func.func @chunks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r:2 = piper.annotate {PP = 0} -> tensor<4x8xf32>, tensor<4x8xf32> {
    %e = piper.annotate {EP = 1, KIND = "ffn"} -> tensor<4x8xf32> {
      %s = arith.addf %x, %x : tensor<4x8xf32>
      piper.yield %s : tensor<4x8xf32>
    }
    piper.yield %e, %x : tensor<4x8xf32>, tensor<4x8xf32>
  }
  piper.annotate {STAGE = "loss"} {
    piper.yield
  }
  return %r#0 : tensor<4x8xf32>
}

// A mesh in an outer module serves functions in nested modules.
// CHECK-LABEL: module @inner
// CHECK:         func.func private @uses_outer_mesh(tensor<8xf32> {piper.placement = #piper.placement<@cluster, [{dp}]>})
module @inner {
  func.func private @uses_outer_mesh(tensor<8xf32> {piper.placement = #piper.placement<@cluster, [{dp}]>})
}

// Backward chunks carry a pass; nested chunks share it.
// CHECK-LABEL: func.func @passes(
// CHECK:         piper.annotate {PP = 0} pass = BI {
// CHECK:           piper.annotate {EP = 1} pass = BI {
// CHECK:         piper.annotate {PP = 0} pass = BW {
// CHECK:         piper.annotate {PP = 0} pass = B {
// CHECK:         piper.annotate {PP = 0} pass = UPD {
// CHECK:         piper.annotate {PP = 0} pass = F {
func.func @passes() {
  piper.annotate {PP = 0} pass = BI {
    piper.annotate {EP = 1} pass = BI {
      piper.yield
    }
    piper.yield
  }
  piper.annotate {PP = 0} pass = BW {
    piper.yield
  }
  piper.annotate {PP = 0} pass = B {
    piper.yield
  }
  piper.annotate {PP = 0} pass = UPD {
    piper.yield
  }
  piper.annotate {PP = 0} pass = F {
    piper.yield
  }
  return
}

// A VJP and gradient results.
// CHECK-LABEL: func.func @vjp(
// CHECK-SAME:    -> (tensor<f32>, tensor<16x32xf32> {piper.grad = "w"})
// CHECK:         piper.vjp "piper.linear" wrt [1] (%{{.*}}, %{{.*}}) cotangents (%{{.*}}) : (tensor<4x16xf32>, tensor<16x32xf32>), (tensor<4x32xf32>) -> tensor<16x32xf32>
// CHECK:         piper.vjp "piper.rmsnorm" wrt [0, 1] (%{{.*}}, %{{.*}}) cotangents (%{{.*}}) forward_attrs {epsilon = 1.000000e-05 : f64} : (tensor<4x16xf32>, tensor<16xf32>), (tensor<4x16xf32>) -> tensor<4x16xf32>, tensor<16xf32>
func.func @vjp(%x: tensor<4x16xf32>, %w: tensor<16x32xf32> {piper.param = #piper.param<"w", zeros>},
               %g: tensor<16xf32>, %dy: tensor<4x32xf32>, %dn: tensor<4x16xf32>, %l: tensor<f32>)
    -> (tensor<f32>, tensor<16x32xf32> {piper.grad = "w"}) {
  %dw = piper.vjp "piper.linear" wrt [1] (%x, %w) cotangents (%dy) : (tensor<4x16xf32>, tensor<16x32xf32>), (tensor<4x32xf32>) -> tensor<16x32xf32>
  %dx, %dg = piper.vjp "piper.rmsnorm" wrt [0, 1] (%x, %g) cotangents (%dn) forward_attrs {epsilon = 1.0e-5 : f64} : (tensor<4x16xf32>, tensor<16xf32>), (tensor<4x16xf32>) -> tensor<4x16xf32>, tensor<16xf32>
  return %l, %dw : tensor<f32>, tensor<16x32xf32>
}
