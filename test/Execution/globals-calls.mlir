// Globals with initial values (read, written, kept between calls), direct
// and indirect calls, a function returning a value, and heap-allocated
// local tensors (above the stack threshold) freed at the end of their block.
// RUN: gc-run %s -e main | filecheck %s
// RUN: gc-run %s -e answer | filecheck %s --check-prefix=RESULT

tir.func @print_int(i32)
tir.func @print_float(f32)

tir.global @counter : i32 = 40 : i32
tir.global @weights : !tir.tensor<3xf32> = dense<[0.5, 1.5, 2.5]> : tensor<3xf32>
tir.global @zeroed : i32

tir.func @bump(%by: i32) -> i32 {
  %g = tir.global_ref @counter : !tir.var<i32>
  %old = tir.read %g : !tir.var<i32>
  %new = tir.add %old, %by : (i32, i32) -> i32
  tir.assign %g = %new : !tir.var<i32>
  tir.return %new : i32
}

// CHECK:      41
// CHECK-NEXT: 43
// CHECK-NEXT: 0
// CHECK-NEXT: 2.5
// CHECK-NEXT: 4.5
// CHECK-NEXT: 100000
tir.func @main() {
  %one = tir.const 1 : i32
  %first = tir.call @bump(%one) : (i32) -> i32
  %p0 = tir.call @print_int(%first) : (i32) -> none
  tir.evaluate %p0 : none
  // an indirect call through func_addr, with @bump as the prototype
  %fn = tir.func_addr @bump : !tir.ptr
  %two = tir.const 2 : i32
  %second = tir.call_indirect %fn(%two) {prototype = @bump} : (i32) -> i32
  %p1 = tir.call @print_int(%second) : (i32) -> none
  tir.evaluate %p1 : none
  %z = tir.global_ref @zeroed : !tir.var<i32>
  %zv = tir.read %z : !tir.var<i32>
  %p2 = tir.call @print_int(%zv) : (i32) -> none
  tir.evaluate %p2 : none
  %w = tir.global_ref @weights : !tir.tensor<3xf32>
  %c2 = tir.const 2 : index
  %last = tir.load %w[%c2] : !tir.tensor<3xf32>
  %p3 = tir.call @print_float(%last) : (f32) -> none
  tir.evaluate %p3 : none
  %sum = tir.define_var : !tir.var<f32>
  %zero = tir.const 0.0 : f32
  tir.assign %sum = %zero : !tir.var<f32>
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c3 = tir.const 3 : index
  tir.for %i = %c0 to %c3 step %c1 {
    %x = tir.load %w[%i] : !tir.tensor<3xf32>
    %s = tir.read %sum : !tir.var<f32>
    %s2 = tir.add %s, %x : (f32, f32) -> f32
    tir.assign %sum = %s2 : !tir.var<f32>
  }
  %total = tir.read %sum : !tir.var<f32>
  %p4 = tir.call @print_float(%total) : (f32) -> none
  tir.evaluate %p4 : none
  // 100000 i32 elements: too big for the stack, so heap-allocated
  tir.stmts {
    %big = tir.define_tensor : !tir.tensor<100000xi32>
    %n = tir.const 100000 : index
    tir.for %j = %c0 to %n step %c1 {
      %v = tir.cast %j : index -> i32
      tir.store %v, %big[%j] : !tir.tensor<100000xi32>
    }
    %last_index = tir.const 99999 : index
    %tail = tir.load %big[%last_index] : !tir.tensor<100000xi32>
    %count = tir.add %tail, %one : (i32, i32) -> i32
    %p5 = tir.call @print_int(%count) : (i32) -> none
    tir.evaluate %p5 : none
  }
  tir.return
}

// RESULT: 42
tir.func @answer() -> i32 {
  %two = tir.const 2 : i32
  %r = tir.call @bump(%two) : (i32) -> i32
  tir.return %r : i32
}
