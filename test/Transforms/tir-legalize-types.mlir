// tir-legalize-types makes tir's implicit conversions explicit tir.casts.
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(tir-legalize-types)' | filecheck %s

// Mixed operands are cast to their common type (int -> float, narrow -> wide);
// a comparison keeps its i1 result.
// CHECK-LABEL: tir.func @mixed_operands(
// CHECK-SAME:      %[[X:.*]]: f32, %[[K:.*]]: i32, %[[N:.*]]: index)
// CHECK-NEXT:    %[[KF:.*]] = tir.cast %[[K]] : i32 -> f32
// CHECK-NEXT:    %[[Y:.*]] = tir.mul %[[X]], %[[KF]] : (f32, f32) -> f32
// CHECK-NEXT:    %[[KI:.*]] = tir.cast %[[K]] : i32 -> index
// CHECK-NEXT:    tir.add %[[KI]], %[[N]] : (index, index) -> index
// CHECK-NEXT:    %[[KF2:.*]] = tir.cast %[[K]] : i32 -> f32
// CHECK-NEXT:    tir.lt %[[KF2]], %[[X]] : (f32, f32) -> i1
// CHECK-NEXT:    tir.return %[[Y]] : f32
tir.func @mixed_operands(%x: f32, %k: i32, %n: index) -> f32 {
  %y = tir.mul %x, %k : (f32, i32) -> f32
  %i = tir.add %k, %n : (i32, index) -> index
  %c = tir.lt %k, %x : (i32, f32) -> i1
  tir.return %y : f32
}

// -----

// bf16 math is computed in f32 and rounded back once; a comparison needs no
// rounding back, and neither does a value that only moves (select, return).
// CHECK-LABEL: tir.func @bf16_math(
// CHECK-SAME:      %[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[V:.*]]: vector<8xbf16>)
// CHECK-NEXT:    %[[A32:.*]] = tir.cast %[[A]] : bf16 -> f32
// CHECK-NEXT:    %[[E32:.*]] = tir.exp %[[A32]] : f32 -> f32
// CHECK-NEXT:    %[[E:.*]] = tir.cast %[[E32]] : f32 -> bf16
// CHECK-NEXT:    %[[E_WIDE:.*]] = tir.cast %[[E]] : bf16 -> f32
// CHECK-NEXT:    %[[B32:.*]] = tir.cast %[[B]] : bf16 -> f32
// CHECK-NEXT:    %[[S32:.*]] = tir.add %[[E_WIDE]], %[[B32]] : (f32, f32) -> f32
// CHECK-NEXT:    %[[S:.*]] = tir.cast %[[S32]] : f32 -> bf16
// CHECK-NEXT:    %[[S_WIDE:.*]] = tir.cast %[[S]] : bf16 -> f32
// CHECK-NEXT:    %[[B_WIDE:.*]] = tir.cast %[[B]] : bf16 -> f32
// CHECK-NEXT:    %[[GT:.*]] = tir.gt %[[S_WIDE]], %[[B_WIDE]] : (f32, f32) -> i1
// CHECK-NEXT:    %[[V32:.*]] = tir.cast %[[V]] : vector<8xbf16> -> vector<8xf32>
// CHECK-NEXT:    %[[R32:.*]] = tir.reduce_add %[[V32]] : vector<8xf32> -> f32
// CHECK-NEXT:    tir.cast %[[R32]] : f32 -> bf16
// CHECK-NEXT:    %[[MAX:.*]] = tir.select %[[GT]], %[[S]], %[[B]] : i1, bf16
// CHECK-NEXT:    tir.return %[[MAX]] : bf16
tir.func @bf16_math(%a: bf16, %b: bf16, %v: vector<8xbf16>) -> bf16 {
  %e = tir.exp %a : bf16 -> bf16
  %s = tir.add %e, %b : (bf16, bf16) -> bf16
  %gt = tir.gt %s, %b : (bf16, bf16) -> i1
  %r = tir.reduce_add %v : vector<8xbf16> -> bf16
  %max = tir.select %gt, %s, %b : i1, bf16
  tir.return %max : bf16
}

// -----

// A bf16 cast to or from anything but f32 goes through f32 (f16 included).
// CHECK-LABEL: tir.func @bf16_casts(
// CHECK-SAME:      %[[A:.*]]: bf16, %[[H:.*]]: f16, %[[I:.*]]: i32)
// CHECK-NEXT:    %[[A32:.*]] = tir.cast %[[A]] : bf16 -> f32
// CHECK-NEXT:    tir.cast %[[A32]] : f32 -> f16
// CHECK-NEXT:    %[[H32:.*]] = tir.cast %[[H]] : f16 -> f32
// CHECK-NEXT:    tir.cast %[[H32]] : f32 -> bf16
// CHECK-NEXT:    %[[I32:.*]] = tir.cast %[[I]] : i32 -> f32
// CHECK-NEXT:    tir.cast %[[I32]] : f32 -> bf16
// CHECK-NEXT:    %[[F:.*]] = tir.cast %[[A]] : bf16 -> f32
// CHECK-NEXT:    tir.return %[[F]] : f32
tir.func @bf16_casts(%a: bf16, %h: f16, %i: i32) -> f32 {
  %0 = tir.cast %a : bf16 -> f16
  %1 = tir.cast %h : f16 -> bf16
  %2 = tir.cast %i : i32 -> bf16
  %3 = tir.cast %a : bf16 -> f32
  tir.return %3 : f32
}

// -----

// Tensor indices of another integer type are cast to index.
// CHECK-LABEL: tir.func @indices(
// CHECK-SAME:      %[[A:.*]]: !tir.tensor<16xf32>, %[[I:.*]]: i32, %[[J:.*]]: index)
// CHECK-NEXT:    %[[II:.*]] = tir.cast %[[I]] : i32 -> index
// CHECK-NEXT:    %[[X:.*]] = tir.load %[[A]][%[[II]]] : !tir.tensor<16xf32>
// CHECK-NEXT:    tir.store %[[X]], %[[A]][%[[J]]] : !tir.tensor<16xf32>
tir.func @indices(%A: !tir.tensor<16xf32>, %i: i32, %j: index) -> f32 {
  %0 = tir.load %A[%i] : !tir.tensor<16xf32>
  tir.store %0, %A[%j] : !tir.tensor<16xf32>
  tir.return %0 : f32
}

// -----

// Legal tir is left as it is: f16 math stays f16 (LLVM computes it).
// CHECK-LABEL: tir.func @legal(
// CHECK-NOT:     tir.cast
// CHECK:         tir.exp %{{.*}} : vector<8xf16> -> vector<8xf16>
// CHECK-NOT:     tir.cast
// CHECK:         tir.return
tir.func @legal(%x: vector<8xf16>, %y: f32) -> vector<8xf16> {
  %e = tir.exp %x : vector<8xf16> -> vector<8xf16>
  %m = tir.mul %e, %e : (vector<8xf16>, vector<8xf16>) -> vector<8xf16>
  %z = tir.add %y, %y : (f32, f32) -> f32
  tir.return %m : vector<8xf16>
}
