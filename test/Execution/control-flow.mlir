// Loops, if/else, vars, vector loads/stores with a scalar tail, printing.
// RUN: gc-run %s -e main | filecheck %s

tir.func @print_int(i32)
tir.func @print_float(f32)
tir.func @print_tensor(!tir.ptr, index)

// CHECK:      55
// CHECK-NEXT: 30
// CHECK-NEXT: 25
// CHECK-NEXT: 2.5
// CHECK-NEXT: 0 2 4 6 8 10 12 14 16 18 20
// CHECK-NEXT: 1
tir.func @main() {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c11 = tir.const 11 : index
  %zero = tir.const 0 : i32
  // sum of 0..10, and separately the even and odd parts through if/else
  %total = tir.define_var %zero : !tir.var<i32>
  %evens = tir.define_var %zero : !tir.var<i32>
  %odds = tir.define_var %zero : !tir.var<i32>
  %two = tir.const 2 : i32
  tir.for %i = %c0 to %c11 step %c1 {
    %value = tir.cast %i : index -> i32
    %t = tir.read %total : !tir.var<i32>
    %t2 = tir.add %t, %value : (i32, i32) -> i32
    tir.assign %total = %t2 : !tir.var<i32>
    %parity = tir.mod %value, %two : (i32, i32) -> i32
    %is_even = tir.eq %parity, %zero : (i32, i32) -> i1
    tir.if %is_even {
      %e = tir.read %evens : !tir.var<i32>
      %e2 = tir.add %e, %value : (i32, i32) -> i32
      tir.assign %evens = %e2 : !tir.var<i32>
    } else {
      %o = tir.read %odds : !tir.var<i32>
      %o2 = tir.add %o, %value : (i32, i32) -> i32
      tir.assign %odds = %o2 : !tir.var<i32>
    }
  }
  %t_final = tir.read %total : !tir.var<i32>
  %p0 = tir.call @print_int(%t_final) : (i32) -> none
  tir.evaluate %p0 : none
  %e_final = tir.read %evens : !tir.var<i32>
  %p1 = tir.call @print_int(%e_final) : (i32) -> none
  tir.evaluate %p1 : none
  %o_final = tir.read %odds : !tir.var<i32>
  %p2 = tir.call @print_int(%o_final) : (i32) -> none
  tir.evaluate %p2 : none
  // auto-cast: i32 / f32 -> f32
  %ten = tir.const 10 : i32
  %four = tir.const 4.0 : f32
  %ratio = tir.div %ten, %four : (i32, f32) -> f32
  %p3 = tir.call @print_float(%ratio) : (f32) -> none
  tir.evaluate %p3 : none
  // A[i] = 2 * i for 11 elements: 8-lane vector body, then a scalar tail
  %A = tir.define_tensor : !tir.tensor<11xf32>
  %c8 = tir.const 8 : index
  tir.for %j = %c0 to %c8 step %c1 {
    %f = tir.cast %j : index -> f32
    tir.store %f, %A[%j] : !tir.tensor<11xf32>
  }
  tir.for %k = %c8 to %c11 step %c1 {
    %f = tir.cast %k : index -> f32
    tir.store %f, %A[%k] : !tir.tensor<11xf32>
  }
  %v = tir.load %A[%c0 lanes 8] : !tir.tensor<11xf32>
  %doubled = tir.add %v, %v : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  tir.store %doubled, %A[%c0 lanes 8] : !tir.tensor<11xf32>
  tir.for %m = %c8 to %c11 step %c1 {
    %s = tir.load %A[%m] : !tir.tensor<11xf32>
    %s2 = tir.add %s, %s : (f32, f32) -> f32
    tir.store %s2, %A[%m] : !tir.tensor<11xf32>
  }
  %pA = tir.addr_of %A : !tir.tensor<11xf32>
  %p4 = tir.call @print_tensor(%pA, %c11) : (!tir.ptr, index) -> none
  tir.evaluate %p4 : none
  // a nested block with its own local, and an early return
  tir.stmts {
    %one = tir.const 1 : i32
    %local = tir.define_var %one : !tir.var<i32>
    %l = tir.read %local : !tir.var<i32>
    %p5 = tir.call @print_int(%l) : (i32) -> none
    tir.evaluate %p5 : none
  }
  tir.return
}
