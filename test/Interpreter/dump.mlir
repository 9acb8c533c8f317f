// --dump=FILE writes step 1 as one line of JSON: the function, seed and
// precision, the initial parameters, the data of step 1 (by argument index),
// the loss and the gradients before the update, every double with 17
// significant digits. test/Torch/ reads it; here only its form is checked
// (this test needs no torch). With --steps=2 the dump is still step 1's.

// RUN: piper-interp %s --seed=5 --steps=2 --dump=%t.json > %t.out
// RUN: cat %t.out %t.json | FileCheck %s

// CHECK:      {{^}}step 1 loss [[LOSS:[0-9.e+-]+]]{{$}}
// CHECK-NEXT: {{^}}step 2 loss {{[0-9.e+-]+}}{{$}}
// CHECK-NEXT: {{^}}{"function":"f","seed":5,"precision":"f64",
// CHECK-SAME: "params":{"w":{"shape":[2,3],"values":[0.030222251450653131,0.026193398639402218,-0.10940581310953297,0.004967931051155873,0.17849883529509183,-0.12627839845821903]},"b":{"shape":[3],"values":[0,0,0]}},
// CHECK-SAME: "data":[{"index":1,"shape":[2,2],"dtype":"f64","values":[{{[0-9.e+-]+}},{{[0-9.e+-]+}},{{[0-9.e+-]+}},{{[0-9.e+-]+}}]},
// CHECK-SAME: {"index":3,"shape":[2],"dtype":"i64","values":[{{[0-2]}},{{[0-2]}}]}],
// CHECK-SAME: "loss":[[LOSS]],
// CHECK-SAME: "grads":{"w":{"shape":[2,3],"values":[{{([0-9.e+-]+,){5}[0-9.e+-]+}}]},"b":{"shape":[3],"values":[{{([0-9.e+-]+,){2}[0-9.e+-]+}}]}}}{{$}}

// In f32 mode the dump holds the f32-rounded values the run used.
// RUN: piper-interp %s --seed=5 --precision=f32 --dump=%t.f32.json
// RUN: FileCheck %s --check-prefix=F32 < %t.f32.json
// F32: {"function":"f","seed":5,"precision":"f32","params":{"w":{"shape":[2,3],"values":[0.030222252011299133,

func.func @f(%w: tensor<2x3xf64> {piper.param = #piper.param<"w", normal(0.1)>},
             %x: tensor<2x2xf64>,
             %b: tensor<3xf64> {piper.param = #piper.param<"b", zeros>},
             %labels: tensor<2xi64>) -> tensor<f64> {
  %o = piper.linear %x, %w, %b : tensor<2x2xf64>, tensor<2x3xf64>, tensor<3xf64> -> tensor<2x3xf64>
  %l = piper.cross_entropy %o, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
