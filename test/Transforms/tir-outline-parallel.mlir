// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(tir-outline-parallel)' | filecheck %s

// Seed 002: the body becomes for_body(i, value, A); main calls it through
// sc_parallel_call_cpu(func_addr(for_body), 0, 100, 1, value, A).
// CHECK:       tir.func @sc_parallel_call_cpu(!tir.ptr, index, index, index, ...)
// CHECK-LABEL: tir.func @for_body(%i: index, %value: f32, %A: !tir.tensor<100xf32>) {
// CHECK-NEXT:    %s = tir.add %value, %i : (f32, index) -> f32
// CHECK-NEXT:    tir.store %s, %A[%i] : !tir.tensor<100xf32>
// CHECK-NEXT:    tir.return
// CHECK-NEXT:  }
// CHECK-LABEL: tir.func @main() {
// CHECK:         %value = tir.define_var %one : !tir.var<f32>
// CHECK-NEXT:    %A = tir.define_tensor : !tir.tensor<100xf32>
// CHECK-NEXT:    %c0 = tir.const 0 : index
// CHECK-NEXT:    %c100 = tir.const 100 : index
// CHECK-NEXT:    %c1 = tir.const 1 : index
// CHECK-NEXT:    %[[VALUE:.*]] = tir.read %value : !tir.var<f32>
// CHECK-NEXT:    %[[FN:.*]] = tir.func_addr @for_body : !tir.ptr
// CHECK-NEXT:    %[[CALL:.*]] = tir.call @sc_parallel_call_cpu(%[[FN]], %c0, %c100, %c1, %[[VALUE]], %A) : (!tir.ptr, index, index, index, f32, !tir.tensor<100xf32>) -> none
// CHECK-NEXT:    tir.evaluate %[[CALL]] : none
// CHECK-NEXT:    tir.return
// CHECK-NOT:   parallel {
tir.func @main() {
  %one = tir.const 1.0 : f32
  %value = tir.define_var %one : !tir.var<f32>
  %A = tir.define_tensor : !tir.tensor<100xf32>
  %c0 = tir.const 0 : index
  %c100 = tir.const 100 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c100 step %c1 parallel {
    %v = tir.read %value : !tir.var<f32>
    %s = tir.add %v, %i : (f32, index) -> f32
    tir.store %s, %A[%i] : !tir.tensor<100xf32>
  }
  tir.return
}

// -----

// Constants and global handles are cloned into the body, not captured;
// nested parallel loops are outlined too; serial loops stay.
// CHECK-LABEL: tir.func @for_body_1(%j: index, %B: !tir.tensor<4x8xf32>, %i: index) {
// CHECK-NEXT:    %zero = tir.const 0.000000e+00 : f32
// CHECK-NEXT:    tir.store %zero, %B[%i, %j] : !tir.tensor<4x8xf32>
// CHECK-LABEL: tir.func @for_body(%i: index, %B: !tir.tensor<4x8xf32>) {
// CHECK-NEXT:    %c0 = tir.const 0 : index
// CHECK-NEXT:    %c8 = tir.const 8 : index
// CHECK-NEXT:    %c1 = tir.const 1 : index
// CHECK-NEXT:    %zero = tir.const 0.000000e+00 : f32
// CHECK-NEXT:    %g = tir.global_ref @count : !tir.var<i32>
// CHECK:         tir.call @sc_parallel_call_cpu(%{{.*}}, %c0, %c8, %c1, %B, %i)
// CHECK:         tir.for %k = %c0 to %c8 step %c1 {
// CHECK-LABEL: tir.func @nested(%B: !tir.tensor<4x8xf32>) {
// CHECK:         tir.call @sc_parallel_call_cpu(%{{.*}}, %c0, %c4, %c1, %B)
tir.global @count : i32
tir.func @nested(%B: !tir.tensor<4x8xf32>) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c4 = tir.const 4 : index
  %c8 = tir.const 8 : index
  %zero = tir.const 0.0 : f32
  %g = tir.global_ref @count : !tir.var<i32>
  tir.for %i = %c0 to %c4 step %c1 parallel {
    tir.for %j = %c0 to %c8 step %c1 parallel {
      tir.store %zero, %B[%i, %j] : !tir.tensor<4x8xf32>
    }
    tir.for %k = %c0 to %c8 step %c1 {
      %n = tir.cast %k : index -> i32
      tir.assign %g = %n : !tir.var<i32>
    }
  }
  tir.return
}

// -----

// The runtime passes the loop var as an index: a narrower loop var is a
// cast of the body's index parameter, and the bounds are cast to index.
// CHECK-LABEL: tir.func @for_body(%i: index, %A: !tir.tensor<8xf32>) {
// CHECK-NEXT:    %one = tir.const
// CHECK-NEXT:    %[[I:.*]] = tir.cast %i : index -> i16
// CHECK-NEXT:    tir.store %one, %A[%[[I]]] : !tir.tensor<8xf32>
// CHECK-LABEL: tir.func @narrow(%A: !tir.tensor<8xf32>) {
// CHECK:         %[[START:.*]] = tir.cast %c0 : i16 -> index
// CHECK-NEXT:    %[[END:.*]] = tir.cast %c8 : i16 -> index
// CHECK-NEXT:    %[[STEP:.*]] = tir.cast %c1 : i16 -> index
// CHECK-NEXT:    tir.call @sc_parallel_call_cpu(%{{.*}}, %[[START]], %[[END]], %[[STEP]], %A)
tir.func @narrow(%A: !tir.tensor<8xf32>) {
  %c0 = tir.const 0 : i16
  %c1 = tir.const 1 : i16
  %c8 = tir.const 8 : i16
  %one = tir.const 1.0 : f32
  tir.for %i = %c0 to %c8 step %c1 parallel {
    tir.store %one, %A[%i] : !tir.tensor<8xf32>
  }
  tir.return
}
