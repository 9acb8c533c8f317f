// --piper-expand-bf16: bf16 is a storage type on the host. Conversions
// between bf16 and f32 become integer code (no __truncsfbf2 call, rounding
// to nearest even as the kernel library and the interpreter round), and
// arithmetic or math left on bf16 runs in f32. A module without bf16 is not
// touched.
// RUN: piper-opt %s -split-input-file --piper-expand-bf16 | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @conversions_become_bits(
// CHECK-NOT:     arith.truncf
// CHECK-NOT:     arith.extf
// CHECK:         arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.shrui
// CHECK:         arith.bitcast %{{.*}} : i16 to bf16
// CHECK:         arith.bitcast %{{.*}} : bf16 to i16
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
func.func @conversions_become_bits(%x: f32) -> f32 {
  %h = arith.truncf %x : f32 to bf16
  %y = arith.extf %h : bf16 to f32
  return %y : f32
}

// -----

// A vectorised bf16 add and exp: computed in f32, rounded once per op.
// CHECK-LABEL: func.func @arithmetic_runs_in_f32(
// CHECK-NOT:     arith.addf %{{.*}} : vector<8xbf16>
// CHECK:         arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         math.exp %{{.*}} : vector<8xf32>
func.func @arithmetic_runs_in_f32(%a: vector<8xbf16>, %b: vector<8xbf16>) -> vector<8xbf16> {
  %s = arith.addf %a, %b : vector<8xbf16>
  %e = math.exp %s : vector<8xbf16>
  return %e : vector<8xbf16>
}

// -----

// No bf16: unchanged (f32 plans compile exactly as before).
// CHECK-LABEL: func.func @f32_is_untouched(
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:    return %[[T]]
func.func @f32_is_untouched(%x: f64) -> f32 {
  %y = arith.truncf %x : f64 to f32
  return %y : f32
}
