// RUN: piper-opt %s | piper-opt | FileCheck %s
// RUN: piper-opt %s --mlir-print-op-generic | piper-opt | FileCheck %s
// Round trip of the DAG ops. The region is a graph region: a node may use a
// node printed after it, and temporal edges name nodes.

func.func private @body(tensor<4xf32>) -> tensor<4xf32>
func.func private @pair(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)

// CHECK-LABEL: func.func @graph(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4xf32>
// CHECK:         %[[R:.*]]:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
// CHECK-NEXT:      %[[B:.*]] = piper.task "BW{PP=1,EP=0}" @body(%[[A:.*]]) {after = ["F{PP=0}"], pass = #piper<pass BW>, tags = {EP = 0 : i64, PP = 1 : i64}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      %[[A]] = piper.task "F{PP=0}" @body(%[[X]]) {pass = #piper<pass F>, tags = {PP = 0 : i64}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      %[[P:.*]]:2 = piper.task "UPD{}" @pair(%[[A]], %[[B]]) {pass = #piper<pass UPD>, tags = {}} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:      piper.dag_yield %[[P]]#0, %[[P]]#1 : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
func.func @graph(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = piper.dag -> tensor<4xf32>, tensor<4xf32> {
    %b = piper.task "BW{PP=1,EP=0}" @body(%a) {tags = {PP = 1, EP = 0}, pass = #piper<pass BW>, after = ["F{PP=0}"]} : (tensor<4xf32>) -> tensor<4xf32>
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    %p:2 = piper.task "UPD{}" @pair(%a, %b) {tags = {}, pass = #piper<pass UPD>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    piper.dag_yield %p#0, %p#1 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// An empty DAG yields nothing.
// CHECK-LABEL: func.func @empty(
// CHECK:         piper.dag {
// CHECK-NEXT:    }
func.func @empty() {
  piper.dag {
  }
  return
}

// A placed DAG: devices on tasks and a transfer between the groups.
// CHECK-LABEL: func.func @placed(
// CHECK:         piper.task "F{PP=0}" @body(%{{.*}}) {devices = {pp = 0 : i64}, pass = #piper<pass F>, tags = {PP = 0 : i64}}
// CHECK-NEXT:    piper.transfer "F{PP=0}#0->{pp=1}" %{{.*}} from {pp = 0 : i64} to {pp = 1 : i64} stream "pp" : tensor<4xf32>
func.func @placed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, devices = {pp = 0}} : (tensor<4xf32>) -> tensor<4xf32>
    %t = piper.transfer "F{PP=0}#0->{pp=1}" %a from {pp = 0} to {pp = 1} stream "pp" : tensor<4xf32>
    %b = piper.task "F{PP=1}" @body(%t) {tags = {PP = 1}, pass = #piper<pass F>, devices = {pp = 1}} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// Collectives over mesh axes, on a stream.
piper.mesh @mesh axes = [dp = 4, pp = 2]
// CHECK-LABEL: func.func @collectives(
// CHECK:         piper.collective "ar" all_reduce %{{.*}} over ["dp"] of @mesh stream "dp_grad" : tensor<4xf32>
// CHECK:         piper.collective "ag" all_gather %{{.*}} over ["dp"] of @mesh stream "dp_param" {devices = {pp = 0 : i64}} : tensor<4xf32>
func.func @collectives(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    %a = piper.collective "ar" all_reduce %x over ["dp"] of @mesh stream "dp_grad" : tensor<4xf32>
    %b = piper.collective "ag" all_gather %a over ["dp"] of @mesh stream "dp_param" {devices = {pp = 0}} : tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
