// A parallel loop runs on the thread pool: each iteration records
// sc_thread_num(). Grains are claimed dynamically, so with 2 threads each
// iteration ran on thread 0 (the caller) or 1 (a helper), whichever came
// first; with 1 thread all run on thread 0. The computed values equal the
// serial loop's.
// RUN: gc-run %s -e main --threads 2 | filecheck %s --check-prefix=TWO
// RUN: gc-run %s -e main --threads 1 | filecheck %s --check-prefix=ONE
// RUN: env GC_NUM_THREADS=2 gc-run %s -e main | filecheck %s --check-prefix=TWO

tir.func @print_int(i32)
tir.func @print_tensor(!tir.ptr, index)
tir.func @sc_thread_num() -> i32

// TWO:      {{^([01] ){8}$}}
// ONE:      0 0 0 0 0 0 0 0
// TWO-NEXT: 0 1 4 9 16 25 36 49
// ONE-NEXT: 0 1 4 9 16 25 36 49
// TWO-NEXT: 1
// ONE-NEXT: 1
tir.func @main() {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c8 = tir.const 8 : index
  %threads = tir.define_tensor : !tir.tensor<8xf32>
  %parallel = tir.define_tensor : !tir.tensor<8xf32>
  %serial = tir.define_tensor : !tir.tensor<8xf32>
  tir.for %i = %c0 to %c8 step %c1 parallel {
    %id = tir.call @sc_thread_num() : () -> i32
    %idf = tir.cast %id : i32 -> f32
    tir.store %idf, %threads[%i] : !tir.tensor<8xf32>
    %square = tir.mul %i, %i : (index, index) -> index
    %sf = tir.cast %square : index -> f32
    tir.store %sf, %parallel[%i] : !tir.tensor<8xf32>
  }
  tir.for %j = %c0 to %c8 step %c1 {
    %square = tir.mul %j, %j : (index, index) -> index
    %sf = tir.cast %square : index -> f32
    tir.store %sf, %serial[%j] : !tir.tensor<8xf32>
  }
  %p0 = tir.addr_of %threads : !tir.tensor<8xf32>
  %r0 = tir.call @print_tensor(%p0, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %r0 : none
  %p1 = tir.addr_of %parallel : !tir.tensor<8xf32>
  %r1 = tir.call @print_tensor(%p1, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %r1 : none
  // 1 if every element of the parallel result equals the serial one
  %true = tir.const 1 : i32
  %same = tir.define_var %true : !tir.var<i32>
  tir.for %k = %c0 to %c8 step %c1 {
    %a = tir.load %parallel[%k] : !tir.tensor<8xf32>
    %b = tir.load %serial[%k] : !tir.tensor<8xf32>
    %differs = tir.ne %a, %b : (f32, f32) -> i1
    tir.if %differs {
      %zero = tir.const 0 : i32
      tir.assign %same = %zero : !tir.var<i32>
    }
  }
  %result = tir.read %same : !tir.var<i32>
  %r2 = tir.call @print_int(%result) : (i32) -> none
  tir.evaluate %r2 : none
  tir.return
}

// A parallel loop over i32, i16 or i4 bounds: the runtime passes the loop
// var as an index, the outlined body narrows it (a translation error before).
// RUN: gc-run %s -e narrow --threads 2 | filecheck %s --check-prefix=NARROW
// RUN: gc-run %s -e narrow --threads 1 | filecheck %s --check-prefix=NARROW

// NARROW:      0 1 4 9 16 25 36 49
// NARROW-NEXT: 0 1 4 9 16 25 36 49
// NARROW-NEXT: 0 1 2 3 4 5 6
tir.func @narrow() {
  %c7 = tir.const 7 : index
  %c8 = tir.const 8 : index
  %a0 = tir.const 0 : i32
  %a1 = tir.const 1 : i32
  %a8 = tir.const 8 : i32
  %b0 = tir.const 0 : i16
  %b1 = tir.const 1 : i16
  %b8 = tir.const 8 : i16
  %n0 = tir.const 0 : i4
  %n1 = tir.const 1 : i4
  %n7 = tir.const 7 : i4
  %A = tir.define_tensor : !tir.tensor<8xf32>
  %B = tir.define_tensor : !tir.tensor<8xf32>
  %C = tir.define_tensor : !tir.tensor<7xf32>
  tir.for %i = %a0 to %a8 step %a1 parallel {
    %square = tir.mul %i, %i : (i32, i32) -> i32
    %f = tir.cast %square : i32 -> f32
    tir.store %f, %A[%i] : !tir.tensor<8xf32>
  }
  tir.for %j = %b0 to %b8 step %b1 parallel {
    %square = tir.mul %j, %j : (i16, i16) -> i16
    %f = tir.cast %square : i16 -> f32
    tir.store %f, %B[%j] : !tir.tensor<8xf32>
  }
  tir.for %k = %n0 to %n7 step %n1 parallel {
    %f = tir.cast %k : i4 -> f32
    tir.store %f, %C[%k] : !tir.tensor<7xf32>
  }
  %pa = tir.addr_of %A : !tir.tensor<8xf32>
  %ra = tir.call @print_tensor(%pa, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %ra : none
  %pb = tir.addr_of %B : !tir.tensor<8xf32>
  %rb = tir.call @print_tensor(%pb, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %rb : none
  %pc = tir.addr_of %C : !tir.tensor<7xf32>
  %rc = tir.call @print_tensor(%pc, %c7) : (!tir.ptr, index) -> none
  tir.evaluate %rc : none
  tir.return
}
