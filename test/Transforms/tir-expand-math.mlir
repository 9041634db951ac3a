// tir-expand-math expands f32 exp, log, tanh, sin and cos into tir arithmetic; what tir
// has no op for is a call of a declared LLVM intrinsic.
// RUN: gc-opt %s --pass-pipeline='builtin.module(tir-expand-math{target=avx2})' | filecheck %s
// RUN: gc-opt %s --pass-pipeline='builtin.module(tir-expand-math{target=generic})' | filecheck %s --check-prefix=GENERIC
// RUN: gc-opt %s --pass-pipeline='builtin.module(tir-expand-math{target=avx512})' | filecheck %s --check-prefix=AVX512

// The intrinsics used are declared once, at the top of the module.
// CHECK:       tir.func @llvm.copysign.v8f32(vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// GENERIC-DAG: tir.func @llvm.fmuladd.v8f32(vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// GENERIC-DAG: tir.func @llvm.fmuladd.f32(f32, f32, f32) -> f32
// AVX512-DAG:  tir.func @llvm.x86.avx512.mask.scalef.ps.512(vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// AVX512-DAG:  tir.func @llvm.ldexp.v8f32.v8i32(vector<8xf32>, vector<8xi32>) -> vector<8xf32>

// exp: the input clamped to [-104, 89] (NaN kept), n = round(x log2 e) by the
// 1.5 * 2**23 trick, r = x - n ln2 in two parts, a degree-6 polynomial as
// fused multiply-adds (llvm.fmuladd without FMA), then times 2**n in two
// normal factors built in the exponent bits (one vscalefps with AVX-512).
// CHECK-LABEL: tir.func @exp(
// CHECK-SAME:      %[[X:.*]]: vector<8xf32>)
// CHECK:         %[[LO:.*]] = tir.const dense<-1.040000e+02> : vector<8xf32>
// CHECK-NEXT:    %[[LOW:.*]] = tir.max %[[X]], %[[LO]]
// CHECK-NEXT:    %[[HI:.*]] = tir.const dense<8.900000e+01> : vector<8xf32>
// CHECK-NEXT:    %[[CLAMPED:.*]] = tir.min %[[LOW]], %[[HI]]
// CHECK-NEXT:    %[[LOG2E:.*]] = tir.const dense<1.44269502> : vector<8xf32>
// CHECK-NEXT:    %[[MAGIC:.*]] = tir.const dense<0x4B400000> : vector<8xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = tir.fmadd %[[CLAMPED]], %[[LOG2E]], %[[MAGIC]] : vector<8xf32>
// CHECK-NEXT:    %[[N:.*]] = tir.sub %[[SHIFTED]], %[[MAGIC]]
// CHECK-COUNT-9: tir.fmadd
// CHECK:         %[[BITS:.*]] = tir.reinterpret %[[SHIFTED]] : vector<8xf32> -> vector<8xi32>
// CHECK:         %[[EXPONENT:.*]] = tir.sub %[[BITS]], %{{.*}} : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
// CHECK:         %[[HALF:.*]] = tir.shr %[[EXPONENT]], %{{.*}} : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
// CHECK:         tir.shl
// CHECK:         %[[SCALED:.*]] = tir.mul %{{.*}}, %{{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    %[[REST:.*]] = tir.sub %[[EXPONENT]], %[[HALF]]
// CHECK:         %[[Y:.*]] = tir.mul %[[SCALED]], %{{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    tir.return %[[Y]] : vector<8xf32>
// GENERIC-LABEL: tir.func @exp(
// GENERIC-NOT:   tir.fmadd
// GENERIC-COUNT-10: tir.call @llvm.fmuladd.v8f32(
// GENERIC-NOT:   tir.fmadd
// GENERIC:       tir.return
// GENERIC-NOT:   tir.fmadd
// AVX512-LABEL:  tir.func @exp(
// AVX512-COUNT-10: tir.fmadd
// AVX512:        %[[E:.*]] = tir.sub
// AVX512-NEXT:   %[[Y:.*]] = tir.call @llvm.ldexp.v8f32.v8i32(%{{.*}}, %[[E]]) : (vector<8xf32>, vector<8xi32>) -> vector<8xf32>
// AVX512-NEXT:   tir.return %[[Y]] : vector<8xf32>
tir.func @exp(%x: vector<8xf32>) -> vector<8xf32> {
  %y = tir.exp %x : vector<8xf32> -> vector<8xf32>
  tir.return %y : vector<8xf32>
}

// With AVX-512, 16 lanes are scaled by the float n directly (vscalefps, all
// lanes, the current rounding mode).
// AVX512-LABEL: tir.func @exp16(
// AVX512:         %[[N:.*]] = tir.sub %{{.*}}, %{{.*}} : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// AVX512-COUNT-8: tir.fmadd
// AVX512:         %[[P:.*]] = tir.fmadd %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// AVX512-NEXT:    %[[MASK:.*]] = tir.const -1 : i16
// AVX512-NEXT:    %[[ROUNDING:.*]] = tir.const 4 : i32
// AVX512-NEXT:    %[[Y:.*]] = tir.call @llvm.x86.avx512.mask.scalef.ps.512(%[[P]], %[[N]], %[[P]], %[[MASK]], %[[ROUNDING]])
// AVX512-NEXT:    tir.return %[[Y]] : vector<16xf32>
tir.func @exp16(%x: vector<16xf32>) -> vector<16xf32> {
  %y = tir.exp %x : vector<16xf32> -> vector<16xf32>
  tir.return %y : vector<16xf32>
}

// log: denormals scaled by 2**23, the exponent and mantissa split in the
// (unsigned) bits, a degree-9 polynomial, then log(inf) = inf, log(0) = -inf
// and NaN for x < 0 and NaN (not x >= 0).
// CHECK-LABEL: tir.func @log(
// CHECK-SAME:      %[[X:.*]]: f32)
// CHECK:         %[[DENORMAL:.*]] = tir.lt %[[X]], %{{.*}} : (f32, f32) -> i1
// CHECK:         %[[SCALED:.*]] = tir.select %[[DENORMAL]], %{{.*}}, %[[X]] : i1, f32
// CHECK-NEXT:    %[[BITS:.*]] = tir.reinterpret %[[SCALED]] : f32 -> ui32
// CHECK-NEXT:    %[[TWENTY_THREE:.*]] = tir.const 23 : ui32
// CHECK-NEXT:    %[[BIASED:.*]] = tir.shr %[[BITS]], %[[TWENTY_THREE]] : (ui32, ui32) -> ui32
// CHECK-NEXT:    tir.reinterpret %[[BIASED]] : ui32 -> i32
// CHECK:         %[[MANTISSA:.*]] = tir.const 8388607 : ui32
// CHECK-NEXT:    tir.int_and %[[BITS]], %[[MANTISSA]] : (ui32, ui32) -> ui32
// CHECK-NEXT:    %[[HALF:.*]] = tir.const 1056964608 : ui32
// CHECK-NEXT:    tir.int_or %{{.*}}, %[[HALF]] : (ui32, ui32) -> ui32
// CHECK:         tir.cast %{{.*}} : i32 -> f32
// CHECK-COUNT-8: tir.add %{{.*}}, %{{.*}} : (f32, f32) -> f32
// CHECK:         %[[INF:.*]] = tir.const 0x7f800000 : f32
// CHECK-NEXT:    %[[IS_INF:.*]] = tir.eq %[[X]], %[[INF]]
// CHECK-NEXT:    tir.select %[[IS_INF]], %[[X]], %{{.*}} : i1, f32
// CHECK:         %[[MINUS_INF:.*]] = tir.const 0xff800000 : f32
// CHECK:         %[[NOT_NEGATIVE:.*]] = tir.ge %[[X]], %{{.*}} : (f32, f32) -> i1
// CHECK-NEXT:    %[[NEGATIVE_OR_NAN:.*]] = tir.not %[[NOT_NEGATIVE]] : i1 -> i1
// CHECK-NEXT:    %[[NAN:.*]] = tir.const 0x7fc00000 : f32
// CHECK-NEXT:    %[[Y:.*]] = tir.select %[[NEGATIVE_OR_NAN]], %[[NAN]], %{{.*}} : i1, f32
// CHECK-NEXT:    tir.return %[[Y]] : f32
tir.func @log(%x: f32) -> f32 {
  %y = tir.log %x : f32 -> f32
  tir.return %y : f32
}

// tanh: an odd polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above (exp
// expanded inline), the sign of x copied back.
// CHECK-LABEL: tir.func @tanh(
// CHECK-SAME:      %[[X:.*]]: vector<8xf32>)
// CHECK-NEXT:    %[[A:.*]] = tir.abs %[[X]] : vector<8xf32> -> vector<8xf32>
// CHECK:         %[[TWICE:.*]] = tir.add %[[A]], %[[A]]
// CHECK-NOT:     tir.exp
// CHECK:         tir.max %[[TWICE]], %{{.*}}
// CHECK:         tir.div
// CHECK:         %[[SMALL:.*]] = tir.lt %[[A]], %{{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
// CHECK-NEXT:    %[[MAGNITUDE:.*]] = tir.select %[[SMALL]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    %[[Y:.*]] = tir.call @llvm.copysign.v8f32(%[[MAGNITUDE]], %[[X]]) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    tir.return %[[Y]] : vector<8xf32>
tir.func @tanh(%x: vector<8xf32>) -> vector<8xf32> {
  %y = tir.tanh %x : vector<8xf32> -> vector<8xf32>
  tir.return %y : vector<8xf32>
}

// sin and cos: x widened to f64 and multiplied by each 29-bit piece of 2/pi
// (exact products), the remainder of each modulo 4 summed without error
// (hi + lo), n = roundeven(hi) and f = (hi - n) + lo; Cephes' f64 polynomials
// of r = f pi/2, picked and negated by n mod 4, rounded to f32 once; sin(-0)
// keeps its sign. No call of llvm.sin/llvm.cos is left.
// CHECK-LABEL: tir.func @sin(
// CHECK-SAME:      %[[X:.*]]: vector<8xf32>)
// CHECK-NEXT:    %[[WIDE:.*]] = tir.cast %[[X]] : vector<8xf32> -> vector<8xf64>
// CHECK-NEXT:    %[[PIECE:.*]] = tir.const dense<0.63661977089941502> : vector<8xf64>
// CHECK-NEXT:    %[[P:.*]] = tir.mul %[[WIDE]], %[[PIECE]]
// CHECK-COUNT-7: tir.roundeven %{{.*}} : vector<8xf64> -> vector<8xf64>
// CHECK:         %[[N:.*]] = tir.roundeven %{{.*}} : vector<8xf64> -> vector<8xf64>
// CHECK:         tir.floor
// CHECK-NOT:     tir.call
// CHECK:         %[[Y:.*]] = tir.cast %{{.*}} : vector<8xf64> -> vector<8xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = tir.const dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:    %[[IS_ZERO:.*]] = tir.eq %[[X]], %[[ZERO]] : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
// CHECK-NEXT:    %[[R:.*]] = tir.select %[[IS_ZERO]], %[[X]], %[[Y]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    tir.return %[[R]] : vector<8xf32>
tir.func @sin(%x: vector<8xf32>) -> vector<8xf32> {
  %y = tir.sin %x : vector<8xf32> -> vector<8xf32>
  tir.return %y : vector<8xf32>
}

// CHECK-LABEL: tir.func @cos(
// CHECK-SAME:      %[[X:.*]]: f32)
// CHECK-NEXT:    tir.cast %[[X]] : f32 -> f64
// CHECK-NOT:     tir.call
// CHECK:         %[[Y:.*]] = tir.cast %{{.*}} : f64 -> f32
// CHECK-NEXT:    tir.return %[[Y]] : f32
tir.func @cos(%x: f32) -> f32 {
  %y = tir.cos %x : f32 -> f32
  tir.return %y : f32
}

// Other float types keep their op (LLVM calls libm for them); bf16 is
// computed in f32 once tir-legalize-types has run.
// CHECK-LABEL: tir.func @other_types(
// CHECK:         tir.exp %{{.*}} : f64 -> f64
// CHECK:         tir.log %{{.*}} : vector<8xf16> -> vector<8xf16>
// CHECK:         tir.tanh %{{.*}} : bf16 -> bf16
// CHECK:         tir.sin %{{.*}} : f64 -> f64
// GENERIC-LABEL: tir.func @scalar_exp(
// GENERIC-COUNT-10: tir.call @llvm.fmuladd.f32(
// GENERIC-NOT:   tir.fmadd
tir.func @other_types(%d: f64, %h: vector<8xf16>, %b: bf16) -> f64 {
  %0 = tir.exp %d : f64 -> f64
  %1 = tir.log %h : vector<8xf16> -> vector<8xf16>
  %2 = tir.tanh %b : bf16 -> bf16
  %3 = tir.sin %d : f64 -> f64
  tir.return %0 : f64
}

tir.func @scalar_exp(%x: f32) -> f32 {
  %y = tir.exp %x : f32 -> f32
  tir.return %y : f32
}

// A result nothing reads is not expanded (its calls of intrinsics would be
// expressions nobody consumes): the op goes, and what fed only it after it.
// CHECK-LABEL: tir.func @unread(
// CHECK-NEXT:    tir.return %{{.*}} : vector<16xf32>
// AVX512-LABEL: tir.func @unread(
// AVX512-NEXT:   tir.return %{{.*}} : vector<16xf32>
tir.func @unread(%x: vector<16xf32>) -> vector<16xf32> {
  %l = tir.log %x : vector<16xf32> -> vector<16xf32>
  %e = tir.exp %l : vector<16xf32> -> vector<16xf32>
  tir.return %x : vector<16xf32>
}
